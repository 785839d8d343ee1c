// The whole `nctlm` command line as a function, so a user's own simulator can offer it with its
// own testbenches registered (register_testbench) before the call:
//
//   int sc_main(int argc, char** argv) {
//       nctlm::register_testbench({"mine", "what it measures", [] { return std::make_unique<Mine>(); }});
//       return nctlm::cli_main(argc, argv);   // my_sim run -t mine ..., my_sim sweep spec.yaml ...
//   }
//
// `sweep` re-runs this same executable for every point (see docs/library.md, "Sweeping your own
// simulator"). Exit status: 0 ok, 1 internal error, 2 bad configuration or usage, 3 simulation error.
#pragma once

#include <string>
#include <vector>

namespace nctlm {

int cli_main(int argc, char** argv);

// The commands behind cli_main, for the ones built on others: `nctlm run ARGS` and
// `nctlm kernel ARGS` (trace a Python kernel, then run it). Return the exit status; throw
// ConfigError for usage errors (exit 2).
int run_command(const std::vector<std::string>& args);
int kernel_command(const std::vector<std::string>& args);
// `nctlm model` and `nctlm import-onnx` (docs/models.md): an op graph from a Hugging Face config or
// an ONNX file, written or run.
int model_command(const std::vector<std::string>& args);
int import_onnx_command(const std::vector<std::string>& args);

} // namespace nctlm
