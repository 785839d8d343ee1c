// `nctlm model` (a Hugging Face config -> an op graph) and `nctlm import-onnx` (an ONNX file -> an op
// graph, by python3 -m nctlm.onnx_import), each optionally followed by the run: `--run -p trn2
// [run options]` is `nctlm run -t graph -w GRAPH.json [run options]`; `--plot FILE.png` draws the
// time by op type (python3 -m nctlm.graph_plot). docs/models.md.
#include "apps/nctlm/cli.h"
#include "apps/nctlm/spawn.h"
#include "models/common/atomic_file.h"
#include "models/common/config.h"
#include "models/graph/graph.h"
#include "models/graph/hf_model.h"
#include "platforms/shipped_configs.h"

#include <fmt/format.h>
#include <fstream>
#include <iostream>

namespace nctlm {

namespace {

const char* kModelUsage = R"(usage: nctlm model --hf-config CONFIG --phase prefill|decode --batch B (--seq S | --context C)
                   [--tp N] [--dp R] [--layers L] [-o GRAPH.json] [--run -p PLATFORM [run options]] [--plot FILE.png]
       nctlm model --list

Builds the op graph of one step of a model from its Hugging Face config.json (a path, or a shipped
name: nctlm model --list) and writes it (-o, or stdout), or runs it (--run: nctlm run -t graph).
  --phase decode --context C   one new token per sequence attending to C positions (KV cache)
  --phase prefill --seq S      S tokens per sequence (an encoder's forward pass)
  --tp N, --dp R               tensor-parallel ranks per replica, data-parallel replicas (cores tp x dp)
  --layers L                   L layers only (default: the whole model with embeddings and LM head)
  --plot FILE.png              with --run: a bar of the step's time by op type
every other option goes to `nctlm run` (-p, --set, --stats-json, --trace, --timing, -q, ...).
Exit status: 0 ok, 2 bad config, option or graph (naming the key, op or tensor), 3 simulation error.
)";

const char* kImportUsage = R"(usage: nctlm import-onnx MODEL.onnx [-o GRAPH.json] [--dim NAME=VALUE]... [--phase encoder|prefill|other]
                         [--run -p PLATFORM [run options]] [--plot FILE.png]

Imports an ONNX model (Debian's python3-onnx: python3 -m nctlm.onnx_import) as an op graph: MatMul
(+ Add) as linear, the attention pattern (MatMul, scale, Softmax, MatMul over heads) as attention,
LayerNormalization, Softmax, Gelu (or its Erf form), Add, Mul, Gather (embedding), Reshape and
Transpose of heads. Symbolic dimensions need values (--dim batch=16 --dim sequence=128). An op outside
the supported set stops the import naming the op and the node (exit 2).
)";

struct Tail {
    bool run = false;
    std::string plot;
    std::vector<std::string> rest;  // options for nctlm run
};

// Runs the graph as `nctlm run -t graph` would, then the plot.
int run_graph(const std::string& graph, const Tail& t) {
    std::vector<std::string> run = {"-t", "graph", "-w", graph};
    run.insert(run.end(), t.rest.begin(), t.rest.end());
    std::string stats;
    for (size_t i = 0; i + 1 < t.rest.size(); ++i)
        if (t.rest[i] == "--stats-json" || t.rest[i] == "-o")
            stats = t.rest[i + 1];
    OutputFile stats_file(stats, "nctlm-graph-stats");
    if (!t.plot.empty() && stats.empty()) {
        run.push_back("--stats-json");
        run.push_back(stats_file.path);
    }
    if (!t.plot.empty())
        check_writable(t.plot);
    int ran = run_command(run);
    if (ran != 0 || t.plot.empty())
        return ran;
    std::string python = python_package_dir();
    int plotted = spawn({python_interpreter(), "-m", "nctlm.graph_plot", stats_file.path, "-o", t.plot}, python);
    if (plotted != 0)
        std::cerr << "nctlm: the plot failed (python3 -m nctlm.graph_plot needs python3-matplotlib)\n";
    else
        std::cout << "plot: " << t.plot << "\n";
    return plotted == 0 ? 0 : 1;
}

std::string value_of(const std::vector<std::string>& args, size_t& i, const std::string& cmd) {
    if (i + 1 >= args.size())
        throw ConfigError("nctlm " + cmd + ": " + args[i] + " needs a value");
    return args[++i];
}

int64_t number_of(const std::string& flag, const std::string& text) {
    try {
        uint64_t v = detail::parse_count(text);
        if (v >= 1 && v <= (uint64_t(1) << 40))
            return int64_t(v);
    } catch (const UnitError&) {
    }
    throw ConfigError(fmt::format("nctlm model: {} {}: expected a whole number >= 1", flag, text));
}

// --run, --plot and the options after them; a stray option without --run is an error.
void take_tail(const std::string& a, const std::vector<std::string>& args, size_t& i, Tail& t, const std::string& cmd) {
    if (a == "--run")
        t.run = true;
    else if (a == "--plot")
        t.plot = value_of(args, i, cmd);
    else
        t.rest.push_back(a);
}

void check_tail(const Tail& t, const std::string& cmd, const std::string& usage) {
    if (!t.run && !t.rest.empty())
        throw ConfigError(fmt::format("nctlm {}: unknown option '{}' (run options go after --run)\n{}", cmd, t.rest[0], usage));
    if (!t.run && !t.plot.empty())
        throw ConfigError("nctlm " + cmd + ": --plot draws a run's time by op type: add --run -p PLATFORM");
}

} // namespace

int model_command(const std::vector<std::string>& args) {
    if (args.empty() || args[0] == "-h" || args[0] == "--help") {
        std::cout << kModelUsage;
        return args.empty() ? 2 : 0;
    }
    if (args[0] == "--list") {
        for (auto& m : shipped_configs("models"))
            std::cout << m << "  (" << find_config(m, "models") << ")\n";
        return 0;
    }
    std::string config, output;
    graph::ModelStep step;
    step.phase.clear();
    Tail tail;
    for (size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        if (tail.run) {
            take_tail(a, args, i, tail, "model");
            continue;
        }
        if (a == "--hf-config")
            config = value_of(args, i, "model");
        else if (a == "--phase")
            step.phase = value_of(args, i, "model");
        else if (a == "--batch")
            step.batch = number_of(a, value_of(args, i, "model"));
        else if (a == "--seq")
            step.seq = number_of(a, value_of(args, i, "model"));
        else if (a == "--context")
            step.context = number_of(a, value_of(args, i, "model"));
        else if (a == "--tp")
            step.tp = uint32_t(number_of(a, value_of(args, i, "model")));
        else if (a == "--dp")
            step.dp = uint32_t(number_of(a, value_of(args, i, "model")));
        else if (a == "--layers")
            step.layers = number_of(a, value_of(args, i, "model"));
        else if (a == "--output" || (a == "-o" && !tail.run))
            output = value_of(args, i, "model");
        else
            take_tail(a, args, i, tail, "model");
    }
    check_tail(tail, "model", kModelUsage);
    if (config.empty())
        throw ConfigError(std::string("nctlm model: --hf-config CONFIG is required (a config.json, or one of: nctlm model "
                                      "--list)\n") +
                          kModelUsage);
    if (step.phase.empty())
        throw ConfigError("nctlm model: --phase prefill|decode is required");
    nlohmann::json g;
    try {
        graph::HfConfig c = graph::read_hf_config(find_config(config, "models"));
        g = graph::build_model_graph(c, step);
        graph::Graph::from_json(g, "<nctlm model>");  // the builder's graph is a valid graph
    } catch (const graph::GraphError& e) {
        throw ConfigError(e.what());
    }
    if (!tail.run) {
        if (output.empty() || output == "-")
            std::cout << g.dump(1) << "\n";
        else
            write_atomically(output, g.dump(1) + "\n");
        return 0;
    }
    OutputFile file(output, "nctlm-graph");
    write_atomically(file.path, g.dump(1) + "\n");
    return run_graph(file.path, tail);
}

int import_onnx_command(const std::vector<std::string>& args) {
    if (args.empty() || args[0] == "-h" || args[0] == "--help") {
        std::cout << kImportUsage;
        return args.empty() ? 2 : 0;
    }
    std::string model = args[0], output;
    if (model[0] == '-')
        throw ConfigError(std::string("nctlm import-onnx: the first argument is the ONNX file\n") + kImportUsage);
    std::vector<std::string> importer = {python_interpreter(), "-m", "nctlm.onnx_import", model};
    Tail tail;
    for (size_t i = 1; i < args.size(); ++i) {
        const std::string& a = args[i];
        if (tail.run)
            take_tail(a, args, i, tail, "import-onnx");
        else if (a == "--dim" || a == "--phase" || a == "--name") {
            importer.push_back(a);
            importer.push_back(value_of(args, i, "import-onnx"));
        } else if (a == "-o" || a == "--output")
            output = value_of(args, i, "import-onnx");
        else
            take_tail(a, args, i, tail, "import-onnx");
    }
    check_tail(tail, "import-onnx", kImportUsage);
    std::string python = python_package_dir();
    if (python.empty())
        throw ConfigError("nctlm import-onnx: the nctlm Python package (python/nctlm) is not in the data directories");
    OutputFile file(output == "-" ? "" : output, "nctlm-onnx-graph");
    importer.push_back("-o");
    importer.push_back(file.path);
    int imported = spawn(importer, python);
    if (imported == 127)
        throw ConfigError("nctlm import-onnx: python3 not found (install it: scripts/install-deps)");
    if (imported != 0)
        return imported == 2 ? 2 : 1;  // the importer said why (the op and node)
    if (!tail.run) {
        if (output.empty() || output == "-") {
            std::ifstream in(file.path);
            std::cout << in.rdbuf();
        }
        return 0;
    }
    return run_graph(file.path, tail);
}

} // namespace nctlm
