#include "models/kernel/kernel_program.h"

#include "models/common/config.h"
#include "models/common/json_file.h"

#include <fmt/format.h>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

namespace nctlm::kernel {

using json = nlohmann::json;

const char* memory_name(Memory m) {
    switch (m) {
    case Memory::Sbuf:
        return "sbuf";
    case Memory::Psum:
        return "psum";
    case Memory::Hbm:
        return "hbm";
    case Memory::Staging:
        return "staging";
    }
    return "?";
}

const char* op_name(KernelOp op) { return op_spec(op).name; }

ElemType parse_elem_type(const std::string& text) {
    if (text == "int32")
        return {"int32", Dtype::Fp32, 4, true};
    try {
        Dtype d = parse_dtype(text);
        return {text, d, dtype_bytes(d), false};
    } catch (const std::exception&) {
        throw KernelError("'" + text + "' is not a dtype (bf16|fp16|fp8|fp32|int32)");
    }
}

namespace {

} // namespace

const std::vector<OpSpec>& op_specs() {
    using K = FieldKind;
    static const std::vector<OpSpec> specs = {
        {KernelOp::Dma, "dma", "DMA issue (loads: dma_in, stores: dma_out)",
         "HBM <-> SBUF through the DmaEngine, NoC and HBM: one descriptor per contiguous HBM run",
         {{"dst", K::Operand, true}, {"src", K::Operand, true}, {"queue", K::Queue, false},
          {"descriptor_bytes", K::Integer, false}, {"spread", K::Bool, false}, {"prebuilt", K::Bool, false}}},
        {KernelOp::Matmul, "matmul", "tensor", "PSUM[M x N] (+)= stationary[K x M]^T . moving[K x N]",
         {{"dst", K::Operand, true}, {"stationary", K::Operand, true}, {"moving", K::Operand, true},
          {"start", K::Expr, false}, {"stop", K::Expr, false}}},
        {KernelOp::Transpose, "transpose", "tensor", "PSUM[F x P] = SBUF[P x F]^T (a matmul against the identity)",
         {{"dst", K::Operand, true}, {"src", K::Operand, true}}},
        {KernelOp::Fetch, "fetch", "tensor (operand fetch)",
         "SBUF operand(s) into staging buffers in one SBUF access (the calibrated GEMM pipeline's fetch stage)",
         {{"dst", K::OperandList, true}, {"src", K::OperandList, true}}},
        {KernelOp::TensorCopy, "tensor_copy", "vector or scalar", "dst = src (PSUM -> SBUF evacuation, casts)",
         {{"dst", K::Operand, true}, {"src", K::Operand, true}, {"engine", K::Engine, false}}},
        {KernelOp::TensorTensor, "tensor_tensor", "vector or scalar", "dst = in0 (operator) in1",
         {{"dst", K::Operand, true}, {"in0", K::Operand, true}, {"in1", K::Operand, true}, {"operator", K::String, false},
          {"engine", K::Engine, false}}},
        {KernelOp::TensorScalar, "tensor_scalar", "vector or scalar",
         "dst = (src operator0 operand0) operator1 operand1; operands are numbers or one element per partition",
         {{"dst", K::Operand, true}, {"src", K::Operand, true}, {"operator0", K::String, false},
          {"operand0", K::OperandOrNumber, false}, {"operator1", K::String, false}, {"operand1", K::OperandOrNumber, false},
          {"engine", K::Engine, false}}},
        {KernelOp::TensorReduce, "tensor_reduce", "vector or scalar", "dst[P x 1] = reduce(src) along the free axis",
         {{"dst", K::Operand, true}, {"src", K::Operand, true}, {"reduce", K::String, false}, {"negate", K::Bool, false},
          {"engine", K::Engine, false}}},
        {KernelOp::Select, "select", "vector or scalar", "dst = predicate ? on_true : on_false",
         {{"dst", K::Operand, true}, {"predicate", K::Operand, true}, {"on_true", K::OperandOrNumber, true},
          {"on_false", K::OperandOrNumber, true}, {"engine", K::Engine, false}}},
        {KernelOp::Memset, "memset", "vector or scalar", "dst = value",
         {{"dst", K::Operand, true}, {"value", K::Number, false}, {"engine", K::Engine, false}}},
        {KernelOp::Iota, "iota", "vector or scalar", "dst = an index expression (expr: informational)",
         {{"dst", K::Operand, true}, {"expr", K::String, false}, {"engine", K::Engine, false}}},
        {KernelOp::Activation, "activation", "scalar", "dst = func(src x scale + bias); reduce: the free-axis sum",
         {{"dst", K::Operand, true}, {"src", K::Operand, true}, {"func", K::String, false},
          {"scale", K::OperandOrNumber, false}, {"bias", K::OperandOrNumber, false}, {"reduce", K::Operand, false}}},
        {KernelOp::Barrier, "barrier", "(waits)",
         "scope core: later instructions wait for every earlier one; grid: every instance reaches it first",
         {{"scope", K::String, false}}},
    };
    return specs;
}

const OpSpec& op_spec(KernelOp op) {
    for (auto& s : op_specs())
        if (s.op == op)
            return s;
    throw std::logic_error("op_spec: unknown op");
}

namespace {

class Loader : JsonReader<KernelError> {
public:
    explicit Loader(std::string file) : JsonReader(std::move(file)) {}

    KernelProgram run(const json& j) {
        p_.file = file_;
        if (!j.is_object())
            fail("", "a kernel program is a JSON object");
        check_keys(j, "", {"format", "version", "name", "source", "args", "grid", "tensors", "buffers", "body"});
        if (!j.contains("format") || j["format"] != "nctlm-kernel")
            fail("/format", "expected \"format\": \"nctlm-kernel\"");
        if (!j.contains("version") || !j["version"].is_number_integer())
            fail("/version", "expected \"version\": 1");
        if (j["version"] != kFormatVersion)
            fail("/version", fmt::format("version {} is not read by this build (it reads version {})",
                                         j["version"].dump(), kFormatVersion));
        p_.name = j.contains("name") ? string(j["name"], "/name") : "kernel";
        p_.source = j.contains("source") ? string(j["source"], "/source") : "";
        if (j.contains("args")) {
            if (!j["args"].is_object())
                fail("/args", "args is an object of integer arguments");
            for (auto& [k, v] : j["args"].items()) {
                check_name(k, "/args/" + k);
                if (!v.is_number_integer() || (v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(INT64_MAX)))
                    fail("/args/" + k, "an argument is a 64-bit integer");
                if (symbols_.find(k) >= 0)
                    fail("/args/" + k, "argument '" + k + "' given twice");
                symbols_.add(k);
                arg_symbols_.add(k);
                p_.arg_names.push_back(k);
                p_.arg_values.push_back(v.get<int64_t>());
            }
        }
        p_.pid_slot = symbols_.add("pid");
        p_.grid = j.contains("grid") ? expr(j["grid"], "/grid") : Expr::constant(1);
        if (j.contains("tensors"))
            for (size_t i = 0; i < array(j["tensors"], "/tensors").size(); ++i)
                tensor(j["tensors"][i], fmt::format("/tensors/{}", i));
        if (j.contains("buffers"))
            for (size_t i = 0; i < array(j["buffers"], "/buffers").size(); ++i)
                buffer(j["buffers"][i], fmt::format("/buffers/{}", i));
        if (!j.contains("body"))
            fail("/body", "missing key 'body' (the instruction list)");
        p_.body = nodes(j["body"], "/body");
        p_.slots = symbols_.slots();
        return std::move(p_);
    }

private:
    void check_name(const std::string& name, const std::string& path) const {
        static const std::set<std::string> reserved = {"pid", "min", "max", "and", "or", "not", "True", "False"};
        bool ok = !name.empty() && (std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_');
        for (char c : name)
            ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
        if (!ok || reserved.count(name))
            fail(path, "'" + name + "' is not a usable name (letters, digits, '_'; not pid/min/max/and/or/not)");
    }
    Expr expr(const json& j, const std::string& path) const {
        if (j.is_boolean())
            return Expr::constant(j.get<bool>());
        if (j.is_number_unsigned() && j.get<uint64_t>() > uint64_t(INT64_MAX))
            fail(path, "number too large for a 64-bit integer");
        if (j.is_number_integer())
            return Expr::constant(j.get<int64_t>());
        if (j.is_string()) {
            try {
                return Expr::parse(j.get<std::string>(), symbols_);
            } catch (const KernelError& e) {
                fail(path, e.what());
            }
        }
        fail(path, "expected an integer or an expression string");
    }
    ElemType dtype(const json& j, const std::string& path) const {
        try {
            return parse_elem_type(string(j, path));
        } catch (const KernelError& e) {
            fail(path, e.what());
        }
    }
    void tensor(const json& j, const std::string& path) {
        if (!j.is_object())
            fail(path, "a tensor is an object");
        check_keys(j, path, {"name", "shape", "dtype", "kind", "placement", "per_instance", "offset"});
        Tensor t;
        t.path = path;
        t.name = string(field(j, "name", path), path + "/name");
        check_name(t.name, path + "/name");
        for (auto& other : p_.tensors)
            if (other.name == t.name)
                fail(path + "/name", "tensor '" + t.name + "' declared twice");
        const json& shape = array(field(j, "shape", path), path + "/shape");
        if (shape.empty())
            fail(path + "/shape", "a tensor has at least one dimension");
        for (size_t i = 0; i < shape.size(); ++i)
            t.shape.push_back(expr(shape[i], fmt::format("{}/shape/{}", path, i)));
        t.type = dtype(field(j, "dtype", path), path + "/dtype");
        if (j.contains("kind")) {
            t.kind = string(j["kind"], path + "/kind");
            if (t.kind != "input" && t.kind != "output" && t.kind != "scratch")
                fail(path + "/kind", "kind is input, output or scratch, not '" + t.kind + "'");
        }
        if (j.contains("placement")) {
            const json& pl = j["placement"];
            if (pl.is_string() && pl == "local") {
                t.placement = Placement::Local;
            } else if (pl.is_string() && pl == "interleaved") {
                t.placement = Placement::Interleaved;
            } else if (pl.is_object() && pl.size() == 1 && pl.contains("stack")) {
                t.placement = Placement::Stack;
                t.stack = uint32_t(whole(pl["stack"], path + "/placement/stack", 0, 1 << 16, "a stack number"));
            } else {
                fail(path + "/placement", "placement is \"local\", \"interleaved\" or {\"stack\": K}");
            }
        }
        if (j.contains("per_instance")) {
            if (!j["per_instance"].is_boolean())
                fail(path + "/per_instance", "expected true or false");
            t.per_instance = j["per_instance"].get<bool>();
        }
        if (j.contains("offset")) {
            t.has_offset = true;
            t.offset = expr(j["offset"], path + "/offset");
        }
        p_.tensors.push_back(std::move(t));
    }
    void buffer(const json& j, const std::string& path) {
        if (!j.is_object())
            fail(path, "a buffer is an object");
        check_keys(j, path, {"name", "memory", "partitions", "shape", "dtype", "bufs", "resident"});
        Buffer b;
        b.path = path;
        b.name = string(field(j, "name", path), path + "/name");
        check_name(b.name, path + "/name");
        for (auto& other : p_.buffers)
            if (other.name == b.name)
                fail(path + "/name", "buffer '" + b.name + "' declared twice");
        for (auto& t : p_.tensors)
            if (t.name == b.name)
                fail(path + "/name", "'" + b.name + "' names a tensor already");
        std::string mem = string(field(j, "memory", path), path + "/memory");
        if (mem == "sbuf")
            b.memory = Memory::Sbuf;
        else if (mem == "psum")
            b.memory = Memory::Psum;
        else if (mem == "staging")
            b.memory = Memory::Staging;
        else
            fail(path + "/memory", "memory is sbuf, psum or staging, not '" + mem + "'");
        b.partitions = expr(field(j, "partitions", path), path + "/partitions");
        const json& shape = array(field(j, "shape", path), path + "/shape");
        for (size_t i = 0; i < shape.size(); ++i)
            b.shape.push_back(expr(shape[i], fmt::format("{}/shape/{}", path, i)));
        b.type = dtype(field(j, "dtype", path), path + "/dtype");
        b.bufs = j.contains("bufs") ? expr(j["bufs"], path + "/bufs") : Expr::constant(1);
        if (j.contains("resident")) {
            if (!j["resident"].is_boolean())
                fail(path + "/resident", "expected true or false");
            b.resident = j["resident"].get<bool>();
        }
        p_.buffers.push_back(std::move(b));
    }
    int find_buffer(const std::string& name) const {
        for (size_t i = 0; i < p_.buffers.size(); ++i)
            if (p_.buffers[i].name == name)
                return int(i);
        return -1;
    }
    int find_tensor(const std::string& name) const {
        for (size_t i = 0; i < p_.tensors.size(); ++i)
            if (p_.tensors[i].name == name)
                return int(i);
        return -1;
    }
    std::vector<std::string> all_names(bool buffers) const {
        std::vector<std::string> n;
        if (buffers)
            for (auto& b : p_.buffers)
                n.push_back(b.name);
        else
            for (auto& t : p_.tensors)
                n.push_back(t.name);
        return n;
    }
    std::pair<Expr, Expr> range(const json& j, const std::string& path) const {
        if (!j.is_array() || j.size() != 2)
            fail(path, "expected [start, size]");
        return {expr(j[0], path + "/0"), expr(j[1], path + "/1")};
    }
    // A number: a JSON number, or a real expression of the arguments ("1 / COLS", "D ** -0.5").
    Operand number(const json& j, const std::string& path) const {
        Operand o;
        o.kind = Operand::Kind::Number;
        if (j.is_number()) {
            o.number = j.get<double>();
            return o;
        }
        if (!j.is_string())
            fail(path, "expected a number or a real expression of the arguments");
        try {
            o.real = Expr::parse_real(j.get<std::string>(), arg_symbols_);
        } catch (const KernelError& e) {
            fail(path, std::string(e.what()) + " (a scalar operand may use the kernel's arguments only)");
        }
        o.has_real = true;
        return o;
    }
    Operand operand(const json& j, const std::string& path, bool numbers_ok = false) const {
        if (numbers_ok && (j.is_number() || j.is_string()))
            return number(j, path);
        Operand o;
        if (!j.is_object())
            fail(path, numbers_ok ? "expected a number or an operand object" : "expected an operand object");
        if (j.contains("buf")) {
            check_keys(j, path, {"buf", "copy", "p", "f"});
            std::string name = string(j["buf"], path + "/buf");
            o.kind = Operand::Kind::Chip;
            o.index = find_buffer(name);
            if (o.index < 0) {
                std::string hint = did_you_mean(name, all_names(true));
                fail(path + "/buf", "unknown buffer '" + name + "'" +
                                        (hint.empty() ? "" : "; did you mean '" + hint + "'?") +
                                        (find_tensor(name) >= 0 ? " ('" + name + "' is an HBM tensor: use \"tensor\")" : ""));
            }
            o.copy = j.contains("copy") ? expr(j["copy"], path + "/copy") : Expr::constant(0);
            if (j.contains("p")) {
                o.p_whole = false;
                std::tie(o.p_start, o.p_size) = range(j["p"], path + "/p");
            }
            if (j.contains("f")) {
                o.f_whole = false;
                const json& f = array(j["f"], path + "/f");
                if (f.size() != p_.buffers[size_t(o.index)].shape.size())
                    fail(path + "/f", fmt::format("buffer '{}' has {} free dimension(s) but f gives {}", name,
                                                  p_.buffers[size_t(o.index)].shape.size(), f.size()));
                for (size_t i = 0; i < f.size(); ++i) {
                    auto [s, n] = range(f[i], fmt::format("{}/f/{}", path, i));
                    o.f_start.push_back(s);
                    o.f_size.push_back(n);
                }
            }
            return o;
        }
        if (j.contains("tensor")) {
            check_keys(j, path, {"tensor", "offset", "ap", "index", "instance"});
            std::string name = string(j["tensor"], path + "/tensor");
            o.kind = Operand::Kind::Hbm;
            o.index = find_tensor(name);
            if (o.index < 0) {
                std::string hint = did_you_mean(name, all_names(false));
                fail(path + "/tensor", "unknown tensor '" + name + "'" +
                                           (hint.empty() ? "" : "; did you mean '" + hint + "'?") +
                                           (find_buffer(name) >= 0 ? " ('" + name + "' is an on-chip buffer: use \"buf\")" : ""));
            }
            if (j.contains("ap") == j.contains("index"))
                fail(path, "an HBM operand has either \"offset\" + \"ap\" or \"index\"");
            if (j.contains("instance")) {
                if (!p_.tensors[size_t(o.index)].per_instance)
                    fail(path + "/instance", "tensor '" + name + "' is shared by every instance: \"instance\" picks "
                                             "another instance's copy of a per_instance tensor");
                o.has_instance = true;
                o.instance = expr(j["instance"], path + "/instance");
            }
            if (j.contains("ap")) {
                o.offset = j.contains("offset") ? expr(j["offset"], path + "/offset") : Expr::constant(0);
                const json& ap = array(j["ap"], path + "/ap");
                if (ap.empty())
                    fail(path + "/ap", "an access pattern has at least one [stride, count] pair");
                for (size_t i = 0; i < ap.size(); ++i)
                    o.ap.push_back(range(ap[i], fmt::format("{}/ap/{}", path, i)));
                return o;
            }
            if (j.contains("offset"))
                fail(path + "/offset", "\"offset\" goes with \"ap\", not \"index\"");
            // The box form: one [start, size] per dimension of the row-major tensor, turned into an
            // access pattern with the tensor's strides (size-1 dimensions dropped, not the last).
            const Tensor& t = p_.tensors[size_t(o.index)];
            const json& index = array(j["index"], path + "/index");
            if (index.size() != t.shape.size())
                fail(path + "/index", fmt::format("tensor '{}' has {} dimension(s) but index gives {}", name,
                                                  t.shape.size(), index.size()));
            std::vector<std::pair<Expr, Expr>> box;
            for (size_t i = 0; i < index.size(); ++i)
                box.push_back(range(index[i], fmt::format("{}/index/{}", path, i)));
            o.ap.clear();
            std::string offset;
            for (size_t d = 0; d < box.size(); ++d) {
                std::string stride = "1";
                for (size_t e = d + 1; e < t.shape.size(); ++e)
                    stride += " * (" + t.shape[e].text() + ")";
                offset += (offset.empty() ? "" : " + ") + std::string("(") + box[d].first.text() + ") * " + stride;
                o.ap.push_back({expr(stride, path + "/index"), box[d].second});
            }
            o.offset = expr(offset, path + "/index");
            return o;
        }
        fail(path, "an operand names \"buf\" (SBUF/PSUM) or \"tensor\" (HBM)");
    }
    Engine engine(const json& j, const std::string& path) const {
        std::string e = string(j, path);
        if (e == "vector")
            return Engine::Vector;
        if (e == "scalar")
            return Engine::Scalar;
        fail(path, "engine is vector or scalar, not '" + e + "'");
    }
    void instruction(const json& j, const std::string& path, Node& node) {
        std::string name = string(field(j, "op", path), path + "/op");
        KernelOp op = KernelOp::Dma;
        bool found = false;
        std::vector<std::string> names;
        for (auto& spec : op_specs()) {
            names.push_back(spec.name);
            if (name == spec.name) {
                op = spec.op;
                found = true;
            }
        }
        if (!found) {
            std::string hint = did_you_mean(name, names);
            fail(path + "/op", "unknown op '" + name + "'" + (hint.empty() ? "" : "; did you mean '" + hint + "'?"));
        }
        std::vector<std::string> keys = {"op", "line", "tile"};
        for (auto& f : op_spec(op).fields)
            keys.push_back(f.name);
        check_keys(j, path, keys);
        Instr in;
        in.op = op;
        in.path = path;
        if (j.contains("line"))
            in.line = string(j["line"], path + "/line");
        if (j.contains("tile")) {
            in.has_tile = true;
            in.tile = expr(j["tile"], path + "/tile");
        }
        auto keep_real = [&](Operand o) {
            if (o.has_real)
                in.numbers.push_back(o.real);
            return o;
        };
        auto need = [&](const char* key, bool numbers_ok = false) {
            return keep_real(operand(field(j, key, path), path + "/" + key, numbers_ok));
        };
        auto maybe = [&](const char* key, bool numbers_ok = false) {
            return j.contains(key) ? keep_real(operand(j[key], path + "/" + key, numbers_ok)) : Operand{};
        };
        auto text = [&](const char* key, const char* def) {
            return j.contains(key) ? string(j[key], path + "/" + key) : std::string(def);
        };
        if (j.contains("engine"))
            in.engine = engine(j["engine"], path + "/engine");
        switch (op) {
        case KernelOp::Dma:
            in.dst = need("dst");
            in.reads.push_back(need("src"));
            if (j.contains("queue") && !(j["queue"].is_string() && j["queue"] == "auto"))
                in.queue = int(whole(j["queue"], path + "/queue", 0, 4095, "queue is a DMA queue number or \"auto\""));
            if (j.contains("descriptor_bytes"))
                in.descriptor_bytes = whole(j["descriptor_bytes"], path + "/descriptor_bytes", 1, 1 << 20,
                                            "descriptor_bytes is a byte count in 1 .. 1 MiB");
            for (auto [key, flag] : {std::pair<const char*, bool*>{"spread", &in.spread}, {"prebuilt", &in.prebuilt}})
                if (j.contains(key)) {
                    if (!j[key].is_boolean())
                        fail(path + "/" + key, "expected true or false");
                    *flag = j[key].get<bool>();
                }
            in.engine = Engine::Vector;  // unused: DMA issue units follow the direction
            break;
        case KernelOp::Matmul:
            in.dst = need("dst");
            in.reads.push_back(need("stationary"));
            in.reads.push_back(need("moving"));
            in.start = j.contains("start") ? expr(j["start"], path + "/start") : Expr::constant(1);
            in.stop = j.contains("stop") ? expr(j["stop"], path + "/stop") : Expr::constant(1);
            in.engine = Engine::Tensor;
            break;
        case KernelOp::Transpose:
            in.dst = need("dst");
            in.reads.push_back(need("src"));
            in.engine = Engine::Tensor;
            break;
        case KernelOp::Fetch: {
            // One operand or a list of them, each into its staging destination, in one SBUF access.
            const json &src = field(j, "src", path), &dst = field(j, "dst", path);
            if (src.is_array() != dst.is_array() || (src.is_array() && src.size() != dst.size()))
                fail(path, "a fetch has one src and one dst, or lists of the same length");
            if (src.is_array()) {
                if (src.empty() || src.size() > 4)
                    fail(path + "/src", "a fetch stages 1 to 4 operands");
                for (size_t i = 0; i < src.size(); ++i) {
                    in.reads.push_back(operand(src[i], fmt::format("{}/src/{}", path, i)));
                    Operand d = operand(dst[i], fmt::format("{}/dst/{}", path, i));
                    if (i == 0)
                        in.dst = d;
                    else
                        in.more_dst.push_back(d);
                }
            } else {
                in.reads.push_back(need("src"));
                in.dst = need("dst");
            }
            in.engine = Engine::Tensor;
            break;
        }
        case KernelOp::TensorCopy:
            in.dst = need("dst");
            in.reads.push_back(need("src"));
            break;
        case KernelOp::TensorTensor:
            in.dst = need("dst");
            in.reads.push_back(need("in0"));
            in.reads.push_back(need("in1"));
            in.what = text("operator", "add");
            break;
        case KernelOp::TensorScalar: {
            in.dst = need("dst");
            in.reads.push_back(need("src"));
            for (const char* k : {"operand0", "operand1"}) {
                Operand o = maybe(k, true);
                if (o.kind == Operand::Kind::Chip)
                    in.reads.push_back(o);
                else if (o.kind == Operand::Kind::Hbm)
                    fail(path + "/" + k, "a scalar operand is a number or an on-chip operand");
            }
            in.what = text("operator0", "multiply");
            break;
        }
        case KernelOp::TensorReduce:
            in.dst = need("dst");
            in.reads.push_back(need("src"));
            in.what = text("reduce", "add");
            if (in.what != "add" && in.what != "max" && in.what != "min" && in.what != "multiply")
                fail(path + "/reduce", "reduce is add, max, min or multiply, not '" + in.what + "'");
            break;
        case KernelOp::Select:
            in.dst = need("dst");
            in.reads.push_back(need("predicate"));
            for (const char* k : {"on_true", "on_false"}) {
                Operand o = need(k, true);
                if (o.kind == Operand::Kind::Chip)
                    in.reads.push_back(o);
            }
            break;
        case KernelOp::Memset:
            in.dst = need("dst");
            if (j.contains("value"))
                keep_real(number(j["value"], path + "/value"));
            break;
        case KernelOp::Iota:
            in.dst = need("dst");
            in.what = text("expr", "");
            break;
        case KernelOp::Activation: {
            in.dst = need("dst");
            in.reads.push_back(need("src"));
            for (const char* k : {"scale", "bias"}) {
                Operand o = maybe(k, true);
                if (o.kind == Operand::Kind::Chip)
                    in.reads.push_back(o);
                else if (o.kind == Operand::Kind::Hbm)
                    fail(path + "/" + k, "scale and bias are numbers or on-chip operands");
            }
            if (j.contains("reduce"))
                in.more_dst.push_back(need("reduce"));
            in.what = text("func", "copy");
            in.engine = Engine::Scalar;
            break;
        }
        case KernelOp::Barrier: {
            std::string scope = text("scope", "core");
            if (scope != "core" && scope != "grid")
                fail(path + "/scope", "scope is core or grid, not '" + scope + "'");
            in.grid_scope = scope == "grid";
            break;
        }
        }
        if (in.dst.kind == Operand::Kind::Number)
            fail(path, "a destination is an operand, not a number");
        node.kind = Node::Kind::Instr;
        node.instr = int(p_.instrs.size());
        p_.instrs.push_back(std::move(in));
    }
    std::vector<Node> nodes(const json& j, const std::string& path) {
        if (++depth_ > 64)
            fail(path, "loops and conditionals nested more than 64 deep");
        std::vector<Node> out;
        for (size_t i = 0; i < array(j, path).size(); ++i) {
            std::string at = fmt::format("{}/{}", path, i);
            const json& n = j[i];
            if (!n.is_object())
                fail(at, "an instruction, loop or conditional is an object");
            Node node;
            node.path = at;
            if (n.contains("loop")) {
                check_keys(n, at, {"loop", "trip", "start", "step", "kind", "body", "line"});
                std::string var = string(n["loop"], at + "/loop");
                check_name(var, at + "/loop");
                if (std::find(p_.arg_names.begin(), p_.arg_names.end(), var) != p_.arg_names.end())
                    fail(at + "/loop", "loop variable '" + var + "' hides the argument of that name");
                node.kind = Node::Kind::Loop;
                node.trip = expr(field(n, "trip", at), at + "/trip");
                node.start = n.contains("start") ? expr(n["start"], at + "/start") : Expr::constant(0);
                node.step = n.contains("step") ? expr(n["step"], at + "/step") : Expr::constant(1);
                if (n.contains("kind")) {
                    std::string kind = string(n["kind"], at + "/kind");
                    if (kind != "affine" && kind != "sequential")
                        fail(at + "/kind", "loop kind is affine or sequential, not '" + kind + "'");
                }
                size_t scope = symbols_.size();
                node.slot = symbols_.add(var);
                node.body = nodes(field(n, "body", at), at + "/body");
                symbols_.pop(scope);
            } else if (n.contains("if")) {
                check_keys(n, at, {"if", "body", "else", "line"});
                node.kind = Node::Kind::If;
                node.cond = expr(n["if"], at + "/if");
                node.body = nodes(field(n, "body", at), at + "/body");
                if (n.contains("else"))
                    node.orelse = nodes(n["else"], at + "/else");
            } else if (n.contains("op")) {
                instruction(n, at, node);
            } else {
                fail(at, "expected an instruction (\"op\"), a loop (\"loop\") or a conditional (\"if\")");
            }
            out.push_back(std::move(node));
        }
        --depth_;
        return out;
    }

    KernelProgram p_;
    Symbols symbols_;
    Symbols arg_symbols_;  // the arguments alone (slots as in symbols_): what a real expression may use
    int depth_ = 0;
};

} // namespace

KernelProgram KernelProgram::from_json(const json& j, const std::string& file) { return Loader(file).run(j); }

KernelProgram KernelProgram::load(const std::string& path) {
    return from_json(read_json_file<KernelError>(path), path);
}

namespace {
bool operand_uses(const Operand& o, int slot) {
    if (o.kind == Operand::Kind::Chip) {
        bool u = o.copy.uses(slot) || (!o.p_whole && (o.p_start.uses(slot) || o.p_size.uses(slot)));
        for (size_t i = 0; i < o.f_start.size(); ++i)
            u = u || o.f_start[i].uses(slot) || o.f_size[i].uses(slot);
        return u;
    }
    if (o.kind == Operand::Kind::Hbm) {
        bool u = o.offset.uses(slot) || (o.has_instance && o.instance.uses(slot));
        for (auto& [s, n] : o.ap)
            u = u || s.uses(slot) || n.uses(slot);
        return u;
    }
    return false;
}
bool nodes_use(const std::vector<Node>& nodes, int slot) {
    for (const Node& n : nodes) {
        if (n.kind == Node::Kind::Loop &&
            (n.trip.uses(slot) || n.start.uses(slot) || n.step.uses(slot) || nodes_use(n.body, slot)))
            return true;
        if (n.kind == Node::Kind::If && (n.cond.uses(slot) || nodes_use(n.body, slot) || nodes_use(n.orelse, slot)))
            return true;
    }
    return false;
}
} // namespace

bool uses_pid(const KernelProgram& p) {
    const int slot = p.pid_slot;
    for (auto& t : p.tensors)
        for (auto& d : t.shape)
            if (d.uses(slot))
                return true;
    for (auto& b : p.buffers) {
        if (b.partitions.uses(slot) || b.bufs.uses(slot))
            return true;
        for (auto& d : b.shape)
            if (d.uses(slot))
                return true;
    }
    for (auto& in : p.instrs) {
        if (operand_uses(in.dst, slot) || in.start.uses(slot) || in.stop.uses(slot) || (in.has_tile && in.tile.uses(slot)))
            return true;
        for (auto* list : {&in.reads, &in.more_dst})
            for (auto& o : *list)
                if (operand_uses(o, slot))
                    return true;
    }
    return nodes_use(p.body, slot);
}

void KernelProgram::set_arg(const std::string& name, int64_t value) {
    for (size_t i = 0; i < arg_names.size(); ++i)
        if (arg_names[i] == name) {
            arg_values[i] = value;
            return;
        }
    std::string hint = did_you_mean(name, arg_names), all;
    for (auto& a : arg_names)
        all += (all.empty() ? "" : ", ") + a;
    throw KernelError(fmt::format("kernel.{}: the kernel has no argument '{}'{} (arguments: {})", name, name,
                                  hint.empty() ? "" : "; did you mean '" + hint + "'?", all.empty() ? "none" : all));
}

} // namespace nctlm::kernel
