// The kernel program format (models/kernel, docs/kernels.md) without a kernel: expressions,
// loading and its errors, layout, expansion, buffer dependencies, lowering.
#include "models/common/config.h"
#include "models/kernel/kernel_lowering.h"
#include "models/kernel/kernel_schema.h"
#include "models/pe/dma_runs.h"
#include "tests/support.h"
#include "tests/xorshift.h"

#include <cmath>
#include <filesystem>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

using namespace nctlm;
using namespace nctlm::kernel;
using json = nlohmann::json;

namespace {

PeConfig trn1_pe() { return ConfigTree::from_file(test::platform("trn1")).load<PeConfig>("pe"); }

// A program with one SBUF buffer `t` (128 partitions x cols bf16, 2 copies), tensors x and y
// (rows x cols) and the given body.
json program(json body) {
    json p = json::parse(R"({"format": "nctlm-kernel", "version": 1, "name": "t", "args": {"rows": 512, "cols": 256},
      "tensors": [{"name": "x", "shape": ["rows", "cols"], "dtype": "bf16"},
                  {"name": "y", "shape": ["rows", "cols"], "dtype": "bf16", "kind": "output"}],
      "buffers": [{"name": "t", "memory": "sbuf", "partitions": 128, "shape": ["cols"], "dtype": "bf16", "bufs": 2},
                  {"name": "u", "memory": "sbuf", "partitions": 128, "shape": ["cols"], "dtype": "bf16", "bufs": 2},
                  {"name": "ps", "memory": "psum", "partitions": 128, "shape": [512], "dtype": "fp32", "bufs": 2}]})");
    p["body"] = std::move(body);
    return p;
}

json load_row(const std::string& copy, const std::string& row) {
    json j = json::parse(R"({"op": "dma", "dst": {"buf": "t"}, "src": {"tensor": "x", "index": [[0, 128], [0, "cols"]]}})");
    j["dst"]["copy"] = copy;
    j["src"]["index"][0][0] = row + " * 128";
    return j;
}

std::string error_of(const json& j, const PeConfig& pe = trn1_pe()) {
    try {
        KernelProgram p = KernelProgram::from_json(j, "k.json");
        Layout l = make_layout(p, pe, 8);
        for (uint32_t i = 0; i < l.grid; ++i)
            check_kernel(p, l, i, pe, {});
    } catch (const KernelError& e) {
        return e.what();
    }
    return "";
}

std::vector<std::pair<Instruction, uint64_t>> lower_all(const json& j, const Unit* want = nullptr) {
    static KernelProgram p;
    static Layout l;
    PeConfig pe = trn1_pe();
    p = KernelProgram::from_json(j, "k.json");
    l = make_layout(p, pe, 8);
    Lowerer low(p, l, 0, pe, {});
    std::vector<std::pair<Instruction, uint64_t>> out;
    Instruction ins;
    uint64_t index = 0;
    while (low.next(ins, index, want))
        out.push_back({ins, index});
    return out;
}

} // namespace

TEST(KernelExpr, PrecedenceFloorDivisionModuloAndComparisons) {
    Symbols s;
    int a = s.add("a"), b = s.add("b");
    std::vector<int64_t> vars(2);
    vars[size_t(a)] = -7;
    vars[size_t(b)] = 2;
    auto ev = [&](const char* text) { return Expr::parse(text, s).eval(vars.data()); };
    EXPECT_EQ(ev("1 + 2 * 3"), 7);
    EXPECT_EQ(ev("(1 + 2) * 3"), 9);
    EXPECT_EQ(ev("a // b"), -4);  // floor, as Python
    EXPECT_EQ(ev("a % b"), 1);
    EXPECT_EQ(ev("7 % -2"), -1);
    EXPECT_EQ(ev("-a"), 7);
    EXPECT_EQ(ev("min(a, b) + max(a, b)"), -5);
    EXPECT_EQ(ev("a < b and b == 2"), 1);
    EXPECT_EQ(ev("not (a < b) or b != 2"), 0);
    EXPECT_TRUE(Expr::parse("3 * 4 - 1", s).is_constant());
    EXPECT_EQ(Expr::parse("3 * 4 - 1", s).eval(nullptr), 11);
    EXPECT_TRUE(Expr::parse("a + 1", s).uses(a));
    EXPECT_FALSE(Expr::parse("a + 1", s).uses(b));
    // Random expressions against the same arithmetic done here.
    test::XorShift64 rng{7};
    for (int i = 0; i < 500; ++i) {
        int64_t x = int64_t(rng() % 2001) - 1000, y = int64_t(rng() % 199) - 99;
        if (y == 0)
            y = 3;
        vars[size_t(a)] = x;
        vars[size_t(b)] = y;
        int64_t q = x / y - ((x % y != 0) && ((x < 0) != (y < 0)));
        EXPECT_EQ(ev("a // b"), q) << x << " // " << y;
        EXPECT_EQ(ev("a % b"), x - q * y) << x << " % " << y;
        EXPECT_EQ(ev("a * 3 - b * (a + 1)"), x * 3 - y * (x + 1));
    }
}

TEST(KernelExpr, ErrorsNameTheProblem) {
    Symbols s;
    s.add("rows");
    auto err = [&](const char* text) {
        try {
            Expr::parse(text, s).eval(std::vector<int64_t>(1, 5).data());
        } catch (const KernelError& e) {
            return std::string(e.what());
        }
        return std::string();
    };
    EXPECT_NE(err("rowz + 1").find("did you mean 'rows'"), std::string::npos);
    EXPECT_NE(err("rows / 2").find("'//'"), std::string::npos);
    EXPECT_NE(err("rows // 0").find("division by zero"), std::string::npos);
    EXPECT_NE(err("rows % (rows - 5)").find("modulo by zero"), std::string::npos);
    EXPECT_NE(err("9223372036854775807 + rows").find("overflow"), std::string::npos);
    EXPECT_NE(err("99999999999999999999").find("too large"), std::string::npos);
    EXPECT_NE(err("(rows + 1").find("')'"), std::string::npos);
    EXPECT_NE(err("rows +").find("unexpected end"), std::string::npos);
}

TEST(KernelExpr, RealExpressionsFollowPythonsPrecedenceAndRefuseWhatIsNotFinite) {
    Symbols s;
    int cols = s.add("COLS"), d = s.add("D");
    std::vector<int64_t> vars(2);
    vars[size_t(cols)] = 4096;
    vars[size_t(d)] = 64;
    auto ev = [&](const char* text) { return Expr::parse_real(text, s).eval_real(vars.data()); };
    EXPECT_DOUBLE_EQ(ev("1 / COLS"), 1.0 / 4096);
    EXPECT_DOUBLE_EQ(ev("1.0 / COLS"), 1.0 / 4096);
    EXPECT_DOUBLE_EQ(ev("D ** -0.5"), 0.125);
    EXPECT_DOUBLE_EQ(ev("-D ** 0.5"), -8.0);           // -(D ** 0.5), as Python
    EXPECT_DOUBLE_EQ(ev("2 ** 3 ** 2"), 512.0);       // right-associative
    EXPECT_DOUBLE_EQ(ev("1e-05 + COLS // 1000 / 2"), 1e-05 + 2.0);
    EXPECT_DOUBLE_EQ(ev("2.5E1 * min(D, 3)"), 75.0);
    EXPECT_TRUE(Expr::parse_real("1 / 8", s).is_constant());
    EXPECT_DOUBLE_EQ(Expr::parse_real("1 / 8", s).eval_real(nullptr), 0.125);
    // Random x / y, x ** p, -x ** 2 against the arithmetic done here.
    test::XorShift64 rng{3};
    for (int i = 0; i < 300; ++i) {
        vars[size_t(cols)] = int64_t(rng() % 2000) + 1;
        vars[size_t(d)] = int64_t(rng() % 300) - 150;
        double c = double(vars[size_t(cols)]), dd = double(vars[size_t(d)]);
        EXPECT_DOUBLE_EQ(ev("D / COLS * 3 - 1"), dd / c * 3 - 1);
        EXPECT_DOUBLE_EQ(ev("COLS ** -0.5 + -D ** 2"), std::pow(c, -0.5) - dd * dd);
    }
    auto err = [&](const char* text, bool real) {
        try {
            if (real)
                Expr::parse_real(text, s).eval_real(vars.data());
            else
                Expr::parse(text, s);
        } catch (const KernelError& e) {
            return std::string(e.what());
        }
        return std::string();
    };
    vars[size_t(d)] = 0;
    EXPECT_NE(err("1 / D", true).find("division by zero"), std::string::npos);
    EXPECT_NE(err("D ** -1.0", true).find("not a finite number"), std::string::npos);
    EXPECT_NE(err("1.5 + COLS", false).find("a real number in an integer expression"), std::string::npos);
    EXPECT_NE(err("COLS ** 2", false).find("unexpected '*'"), std::string::npos);
    EXPECT_NE(err("COLS / 2", false).find("'//'"), std::string::npos);
}

TEST(KernelLoad, ScalarOperandsMayBeRealExpressionsOfTheArguments) {
    json scale = json::parse(R"({"op": "tensor_scalar", "dst": {"buf": "u"}, "src": {"buf": "t"},
                                 "operator0": "multiply", "operand0": "1 / cols", "operator1": "add", "operand1": 1e-05})");
    json body = json::array({load_row("0", "0"), scale});
    EXPECT_EQ(error_of(program(body)), "");
    body[1]["operand0"] = "1 / (cols - 256)";  // cols is 256: checked once the arguments are bound
    EXPECT_NE(error_of(program(body)).find("/body/1: expression '1 / (cols - 256)': division by zero"),
              std::string::npos)
        << error_of(program(body));
    body[1]["operand0"] = "i / 2";  // only the arguments: a scalar operand is a constant of the run
    json loop = {{"loop", "i"}, {"trip", 2}, {"body", body}};
    EXPECT_NE(error_of(program(json::array({loop}))).find("unknown name 'i'"), std::string::npos);
    json fill = json::parse(R"({"op": "memset", "dst": {"buf": "u"}, "value": "cols ** 0.5"})");
    EXPECT_EQ(error_of(program(json::array({fill}))), "");
    fill["value"] = "cols **";
    EXPECT_NE(error_of(program(json::array({fill}))).find("/body/0/value"), std::string::npos);
}

TEST(KernelLoad, StructuralErrorsNameThePathAndSuggest) {
    json loop = {{"loop", "i"}, {"trip", "rows // 128"}};
    loop["body"] = json::array({load_row("i", "i")});
    json ok = program(json::array({loop}));
    EXPECT_EQ(error_of(ok), "");
    json bad = ok;
    bad["version"] = 2;
    EXPECT_NE(error_of(bad).find("version 2 is not read by this build"), std::string::npos);
    bad = ok;
    bad["body"][0]["body"][0]["op"] = "dmaa";
    EXPECT_NE(error_of(bad).find("/body/0/body/0/op: unknown op 'dmaa'; did you mean 'dma'?"), std::string::npos)
        << error_of(bad);
    bad = ok;
    bad["body"][0]["body"][0]["quueue"] = 1;
    EXPECT_NE(error_of(bad).find("unknown key 'quueue'; did you mean 'queue'?"), std::string::npos) << error_of(bad);
    bad = ok;
    bad["body"][0]["body"][0]["dst"]["buf"] = "x";
    EXPECT_NE(error_of(bad).find("'x' is an HBM tensor"), std::string::npos) << error_of(bad);
    bad = ok;
    bad["body"][0]["trip"] = "rows // bogus";
    EXPECT_NE(error_of(bad).find("/body/0/trip"), std::string::npos);
    bad = ok;
    bad["buffers"][0]["memory"] = "dram";
    EXPECT_NE(error_of(bad).find("memory is sbuf, psum or staging"), std::string::npos);
    bad = ok;
    bad["body"][0]["loop"] = "rows";
    EXPECT_NE(error_of(bad).find("hides the argument"), std::string::npos);
}

TEST(KernelLoad, ShapesAreCheckedAgainstThePe) {
    json j = program(json::array());
    j["buffers"][0]["partitions"] = 129;
    EXPECT_NE(error_of(j).find("spans 129 partitions but the sbuf has 128"), std::string::npos) << error_of(j);
    j = program(json::array());
    j["buffers"][0]["shape"] = {"cols * 400"};  // 200 KiB per copy x 2
    EXPECT_NE(error_of(j).find("the SBUF buffers need"), std::string::npos) << error_of(j);
    j = program(json::array());
    j["buffers"][2]["bufs"] = 9;  // 9 banks of 2 KiB > 8
    EXPECT_NE(error_of(j).find("PSUM buffers need"), std::string::npos) << error_of(j);
    j = program(json::array());
    j["grid"] = 9;
    EXPECT_NE(error_of(j).find("asks for 9 instances"), std::string::npos);
}

TEST(KernelCheck, BadAccessesAreRefusedNamingTheInstructionAndItsLine) {
    json load = load_row("0", "0");
    load["line"] = "k.py:3";
    auto with = [](std::vector<json> body) { return program(json(body)); };
    json past = load;  // rows 512..639 of a 512-row tensor
    past["src"]["index"][0][0] = "4 * 128";
    EXPECT_NE(error_of(with({past})).find("dma /body/0 (k.py:3)"), std::string::npos) << error_of(with({past}));
    EXPECT_NE(error_of(with({past})).find("outside its"), std::string::npos);
    json narrow = load;  // 64 partitions of SBUF against 128 rows of HBM
    narrow["dst"]["p"] = json::array({0, 64});
    EXPECT_NE(error_of(with({narrow})).find("the HBM side moves"), std::string::npos);
    json unwritten = json::parse(R"({"op": "tensor_copy", "dst": {"buf": "t"}, "src": {"buf": "u"}, "line": "k.py:9"})");
    EXPECT_NE(error_of(with({unwritten})).find("reads sbuf buffer 'u' (copy 0) before anything wrote it"),
              std::string::npos)
        << error_of(with({unwritten}));
    json mm = json::parse(R"({"op": "matmul", "dst": {"buf": "ps", "p": [0, 128], "f": [[0, 256]]},
        "stationary": {"buf": "t", "f": [[0, 128]]}, "moving": {"buf": "u", "p": [0, 64], "f": [[0, 256]]}})");
    json fill_u = json::parse(R"({"op": "memset", "dst": {"buf": "u"}, "value": 0})");
    EXPECT_NE(error_of(with({load, fill_u, mm})).find("contracts over 128 partitions but moving over 64"),
              std::string::npos)
        << error_of(with({load, fill_u, mm}));
    json accumulate = mm;
    accumulate["moving"]["p"] = json::array({0, 128});
    accumulate["start"] = 0;
    EXPECT_NE(error_of(with({load, fill_u, accumulate})).find("before a matmul with start = 1"), std::string::npos);
    json huge = json::parse(R"({"loop": "i", "trip": "1 << 3", "body": []})");
    EXPECT_NE(error_of(with({huge})).find("expression"), std::string::npos);
    json many = json::parse(R"({"loop": "i", "trip": 100000, "body": [{"loop": "j", "trip": 100000, "body": []}]})");
    many["body"][0]["body"].push_back(fill_u);
    EXPECT_NE(error_of(with({many})).find("expands to more than"), std::string::npos) << error_of(with({many}));
}

TEST(KernelCheck, GridBarriersMustBeReachedByEveryInstance) {
    json j = program(json::parse(R"([{"if": "pid == 0", "body": [{"op": "barrier", "scope": "grid"}]}])"));
    j["grid"] = 2;
    PeConfig pe = trn1_pe();
    KernelProgram p = KernelProgram::from_json(j, "k.json");
    Layout l = make_layout(p, pe, 8);
    EXPECT_EQ(check_kernel(p, l, 0, pe, {}).grid_barriers, 1u);
    EXPECT_EQ(check_kernel(p, l, 1, pe, {}).grid_barriers, 0u);
}

// A tensor's explicit offset (bytes in its stack or window, per instance with pid) and an HBM
// operand reading another instance's copy: values, and the errors that name the key.
TEST(KernelLayout, ExplicitOffsetsAndAnotherInstancesCopy) {
    json j = program(json::array({load_row("0", "0")}));
    j["grid"] = 3;
    j["tensors"][0]["per_instance"] = true;
    j["tensors"][0]["offset"] = "pid * 1048576 + rows * 2";
    PeConfig pe = trn1_pe();
    KernelProgram p = KernelProgram::from_json(j, "k.json");
    Layout l = make_layout(p, pe, 8);
    EXPECT_EQ(l.tensors[0].offsets, (std::vector<uint64_t>{1024, 1048576 + 1024, 2 * 1048576 + 1024}));
    EXPECT_TRUE(l.tensors[1].offsets.empty());  // placed after the explicit ones
    json odd = j;
    odd["tensors"][0]["offset"] = "pid * 1048576 + 1";
    EXPECT_NE(error_of(odd).find("not a multiple of the 2-byte element"), std::string::npos) << error_of(odd);
    json shared = j;
    shared["tensors"][0]["per_instance"] = false;
    EXPECT_NE(error_of(shared).find("/tensors/0/offset: 'pid * 1048576 + rows * 2' may use only the kernel's arguments"),
              std::string::npos)
        << error_of(shared);
    // Instance i reads instance (i + 1) mod 3's copy: its address, not its own.
    json other = j;
    other["body"][0]["src"]["instance"] = "(pid + 1) % 3";
    p = KernelProgram::from_json(other, "k.json");
    l = make_layout(p, pe, 8);
    l.tensors[0].base = {1u << 30, 2u << 30, 3u << 30};
    l.tensors[1].base = {5u << 30};
    for (uint32_t i = 0; i < 3; ++i) {
        Lowerer low(p, l, i, pe, {});
        Instruction ins;
        uint64_t index = 0;
        ASSERT_TRUE(low.next(ins, index));
        EXPECT_EQ(ins.address, uint64_t((i + 1) % 3 + 1) << 30);
    }
    json past = other;
    past["body"][0]["src"]["instance"] = "pid + 1";
    EXPECT_NE(error_of(past).find("instance 3 (pid + 1) of tensor 'x' is outside the grid's 3 instances"),
              std::string::npos)
        << error_of(past);
    json not_per = other;
    not_per["tensors"][0]["per_instance"] = false;
    not_per["tensors"][0].erase("offset");
    EXPECT_NE(error_of(not_per).find("/body/0/src/instance: tensor 'x' is shared by every instance"), std::string::npos)
        << error_of(not_per);
}

TEST(KernelWalk, LoopsExpandInOrderWithTriangularTripsAndConditionals) {
    // for i in 0..3: for j in 0..i: memset t[i % 2] (i == 2: memset u[j] instead)
    json body = json::parse(R"([{"loop": "i", "trip": 4, "body": [{"loop": "j", "trip": "i", "body": [
        {"if": "i == 2", "body": [{"op": "memset", "dst": {"buf": "u", "copy": "j"}}],
         "else": [{"op": "memset", "dst": {"buf": "t", "copy": "i"}}]}]}]}])");
    KernelProgram p = KernelProgram::from_json(program(body), "k.json");
    PeConfig pe = trn1_pe();
    Layout l = make_layout(p, pe, 1);
    EXPECT_EQ(count_instructions(p, l, 0, 1000), 6u);  // 0 + 1 + 2 + 3
    Walker w(p, l, 0);
    Step s;
    std::vector<std::pair<int, uint32_t>> seen;  // (buffer, copy)
    while (w.next(s))
        seen.push_back({s.dst.buffer, s.dst.copy});
    std::vector<std::pair<int, uint32_t>> want = {{0, 1}, {1, 0}, {1, 1}, {0, 1}, {0, 1}, {0, 1}};
    EXPECT_EQ(seen, want);
}

TEST(KernelDeps, ReadAfterWriteWriteAfterReadAndDisjointBoxes) {
    // load t[0] rows 0..127; add u = t + t (vector waits for the load); a second load into t[0]
    // waits for the add (WAR); a load into the other copy waits for nothing.
    json add = json::parse(R"({"op": "tensor_tensor", "dst": {"buf": "u"}, "in0": {"buf": "t"}, "in1": {"buf": "t"}})");
    json half_a = load_row("1", "1"), half_b = load_row("1", "2");
    half_a["dst"]["p"] = json::array({0, 64});
    half_a["src"]["index"] = json::parse(R"([["128", 64], [0, "cols"]])");
    half_b["dst"]["p"] = json::array({64, 64});
    half_b["src"]["index"] = json::parse(R"([["192", 64], [0, "cols"]])");
    auto ins = lower_all(program(json::array({load_row("0", "0"), add, load_row("0", "1"), half_a, half_b})));
    ASSERT_EQ(ins.size(), 5u);
    const Instruction &load0 = ins[0].first, &vec = ins[1].first, &reload = ins[2].first;
    EXPECT_TRUE(load0.waits.empty());
    ASSERT_EQ(vec.waits.size(), 1u);
    EXPECT_EQ(vec.waits[0].sem, uint32_t(load0.signal));
    EXPECT_EQ(vec.waits[0].value, load0.signal_ordinal);
    // WAR on t[0]: waits for the vector engine's first op (and the earlier load, WAW).
    bool on_vector = false;
    for (auto& w : reload.waits)
        on_vector = on_vector || (w.sem == uint32_t(Unit::Vector) && w.value == 1);
    EXPECT_TRUE(on_vector);
    EXPECT_TRUE(ins[3].first.waits.empty());  // copy 1: untouched before
    EXPECT_TRUE(ins[4].first.waits.empty());  // the other half of copy 1: disjoint from the first half
}

TEST(KernelDeps, RecordsStayBoundedOnLongPrograms) {
    // 20 000 stores of distinct rows of y: the tensor's records merge, never grow past the bound.
    json body = json::parse(R"([{"op": "memset", "dst": {"buf": "t", "copy": 0}},
        {"op": "memset", "dst": {"buf": "t", "copy": 1}},
        {"loop": "i", "trip": 20000, "body": [{"op": "dma", "src": {"buf": "t", "copy": "i"},
            "dst": {"tensor": "y", "index": [["(i % 4) * 128", 128], [0, "cols"]]}}]}])");
    KernelProgram p = KernelProgram::from_json(program(body), "k.json");
    PeConfig pe = trn1_pe();
    Layout l = make_layout(p, pe, 1);
    DependencyTracker deps(l);
    Walker w(p, l, 0);
    Step s;
    uint64_t ordinal = 0;
    std::vector<SemWait> waits;
    while (w.next(s)) {
        waits.clear();
        deps.visit(s, 9, ++ordinal, false, waits);
    }
    EXPECT_LE(deps.records(), (2 * 2 + 2 + 2) * DependencyTracker::kMaxRecords);
}

TEST(KernelLowering, EachUnitsLazyStreamEqualsTheWholeWalk) {
    json j = json::parse(R"({"format": "nctlm-kernel", "version": 1, "name": "mm", "args": {"n": 6},
      "tensors": [{"name": "a", "shape": [128, 128], "dtype": "bf16"}, {"name": "b", "shape": ["n * 128", 512], "dtype": "bf16"},
                  {"name": "c", "shape": ["n * 128", 512], "dtype": "bf16", "kind": "output"}],
      "buffers": [{"name": "at", "memory": "sbuf", "partitions": 128, "shape": [128], "dtype": "bf16"},
                  {"name": "bt", "memory": "sbuf", "partitions": 128, "shape": [512], "dtype": "bf16", "bufs": 3},
                  {"name": "ps", "memory": "psum", "partitions": 128, "shape": [512], "dtype": "fp32", "bufs": 2},
                  {"name": "ct", "memory": "sbuf", "partitions": 128, "shape": [512], "dtype": "bf16", "bufs": 2}],
      "body": [{"op": "dma", "dst": {"buf": "at"}, "src": {"tensor": "a", "index": [[0, 128], [0, 128]]}},
               {"loop": "i", "trip": "n", "body": [
                 {"op": "dma", "dst": {"buf": "bt", "copy": "i"}, "src": {"tensor": "b", "index": [["i * 128", 128], [0, 512]]}},
                 {"op": "matmul", "dst": {"buf": "ps", "copy": "i"}, "stationary": {"buf": "at"}, "moving": {"buf": "bt", "copy": "i"}},
                 {"op": "activation", "func": "gelu", "dst": {"buf": "ct", "copy": "i"}, "src": {"buf": "ps", "copy": "i"}},
                 {"op": "dma", "dst": {"tensor": "c", "index": [["i * 128", 128], [0, 512]]}, "src": {"buf": "ct", "copy": "i"}}]}]})");
    auto whole = lower_all(j);
    PeConfig pe = trn1_pe();
    KernelProgram p = KernelProgram::from_json(j, "k.json");
    Layout l = make_layout(p, pe, 1);
    KernelCounts counts = check_kernel(p, l, 0, pe, {});
    EXPECT_EQ(counts.instructions, whole.size());
    EXPECT_DOUBLE_EQ(counts.flops, 6 * 2.0 * 128 * 128 * 512);
    nctlm::Program prog = make_kernel_program(std::make_shared<KernelProgram>(p), std::make_shared<Layout>(l), 0, pe,
                                              {}, counts);
    for (int u = 0; u < kUnits; ++u) {
        std::vector<std::pair<Instruction, uint64_t>> mine;
        for (auto& w : whole)
            if (int(w.first.unit) == u)
                mine.push_back(w);
        ASSERT_EQ(prog.source->count(Unit(u)), mine.size());
        Instruction got;
        for (uint64_t k = 0; k < mine.size(); ++k) {
            ASSERT_EQ(prog.source->at(Unit(u), k, got), mine[k].second);
            EXPECT_EQ(got.op, mine[k].first.op);
            EXPECT_EQ(got.signal, mine[k].first.signal);
            EXPECT_EQ(got.signal_ordinal, mine[k].first.signal_ordinal);
            EXPECT_EQ(got.queue, mine[k].first.queue);
            ASSERT_EQ(got.waits.size(), mine[k].first.waits.size());
            for (size_t w = 0; w < got.waits.size(); ++w) {
                EXPECT_EQ(got.waits[w].sem, mine[k].first.waits[w].sem);
                EXPECT_EQ(got.waits[w].value, mine[k].first.waits[w].value);
            }
        }
    }
    // Costs: the matmul is K 128 x M 128 x N 512; the activation reads PSUM and writes SBUF.
    const Instruction& mm = whole[2].first;
    EXPECT_EQ(mm.op, Op::Matmul);
    EXPECT_EQ(mm.k_rows, 128u);
    EXPECT_EQ(mm.n_stationary, 128u);
    EXPECT_EQ(mm.n_moving, 512u);
    EXPECT_EQ(mm.psum_bytes, 128u * 512 * 4);
    const Instruction& act = whole[3].first;
    EXPECT_EQ(act.unit, Unit::Scalar);
    EXPECT_EQ(act.n_free, 512u);
    EXPECT_EQ(act.psum_bytes, 128u * 512 * 4);
    EXPECT_EQ(act.bytes, 128u * 512 * 2);
    EXPECT_FALSE(act.write_psum);
}

namespace {

// Every field of two lowered instructions.
void expect_same(const Instruction& a, const Instruction& b, const std::string& where) {
    SCOPED_TRACE(where);
    EXPECT_EQ(a.op, b.op);
    EXPECT_EQ(a.unit, b.unit);
    EXPECT_EQ(a.stage, b.stage);
    EXPECT_EQ(a.tile, b.tile);
    ASSERT_EQ(a.waits.size(), b.waits.size());
    for (size_t w = 0; w < a.waits.size(); ++w) {
        EXPECT_EQ(a.waits[w].sem, b.waits[w].sem);
        EXPECT_EQ(a.waits[w].value, b.waits[w].value);
    }
    EXPECT_EQ(a.signal, b.signal);
    EXPECT_EQ(a.signal_ordinal, b.signal_ordinal);
    EXPECT_EQ(a.address, b.address);
    EXPECT_EQ(a.bytes, b.bytes);
    EXPECT_EQ(a.queue, b.queue);
    EXPECT_EQ(a.partitions, b.partitions);
    EXPECT_EQ(a.partition, b.partition);
    EXPECT_EQ(a.offset, b.offset);
    EXPECT_EQ(a.read_offset, b.read_offset);
    EXPECT_EQ(a.write_psum, b.write_psum);
    EXPECT_EQ(a.psum_bytes, b.psum_bytes);
    EXPECT_EQ(a.n_stationary, b.n_stationary);
    EXPECT_EQ(a.n_moving, b.n_moving);
    EXPECT_EQ(a.k_rows, b.k_rows);
    EXPECT_EQ(a.n_free, b.n_free);
    EXPECT_EQ(a.dtype, b.dtype);
    EXPECT_EQ(a.inputs, b.inputs);
    EXPECT_EQ(a.sbuf_read_bytes, b.sbuf_read_bytes);
    EXPECT_EQ(a.descriptor_bytes, b.descriptor_bytes);
    EXPECT_EQ(a.contiguous, b.contiguous);
    EXPECT_EQ(a.spread, b.spread);
    EXPECT_EQ(a.transpose, b.transpose);
    EXPECT_EQ(a.pattern.dims, b.pattern.dims);
    EXPECT_EQ(a.pattern.elem_bytes, b.pattern.elem_bytes);
    for (int d = 0; d < 6; ++d) {
        EXPECT_EQ(a.pattern.stride[d], b.pattern.stride[d]);
        EXPECT_EQ(a.pattern.count[d], b.pattern.count[d]);
    }
    EXPECT_STREQ(a.label, b.label);
    EXPECT_EQ(a.source == nullptr, b.source == nullptr);
    if (a.source && b.source) {
        EXPECT_STREQ(a.source, b.source);  // each points into its own copy of the program
    }
    for (int d = 0; d < 3; ++d)
        EXPECT_EQ(a.shape[d], b.shape[d]);
}

// Pulls every unit's stream from a kernel program's source in a random interleaving (runs of one
// unit long enough, at times, that another falls behind by thousands of instructions), twice (a
// second run of the program starts over), and compares each instruction with a Lowerer of the unit's own.
void expect_interleavings_match(const KernelProgram& p, const Layout& l, uint32_t instance, const PeConfig& pe,
                                test::XorShift64& rng) {
    KernelCounts counts = check_kernel(p, l, instance, pe, {});
    nctlm::Program prog = make_kernel_program(std::make_shared<KernelProgram>(p), std::make_shared<Layout>(l),
                                              instance, pe, {}, counts);
    for (int run = 0; run < 2; ++run) {
        std::array<std::unique_ptr<Lowerer>, kUnits> own;
        std::array<uint64_t, kUnits> next{};
        uint64_t left = counts.instructions;
        while (left) {
            int u = int(rng() % kUnits);
            uint64_t burst = rng() % 8 == 0 ? 1 + rng() % 6000 : 1 + rng() % 4;
            for (; burst && next[size_t(u)] < prog.source->count(Unit(u)); --burst, --left) {
                if (!own[size_t(u)])
                    own[size_t(u)] = std::make_unique<Lowerer>(p, l, instance, pe, LoweringOptions{});
                Instruction want, got;
                uint64_t want_index = 0;
                Unit unit = Unit(u);
                ASSERT_TRUE(own[size_t(u)]->next(want, want_index, &unit));
                uint64_t k = next[size_t(u)]++;
                ASSERT_EQ(prog.source->at(unit, k, got), want_index) << p.name << " unit " << u << " #" << k;
                expect_same(got, want, fmt::format("{} instance {} unit {} #{}", p.name, instance, u, k));
                if (::testing::Test::HasFailure())
                    return;
            }
        }
    }
}

} // namespace

// The units share one walk of the program (kernel_lowering.cpp, KernelSource): whatever order they
// pull in, each gets the instructions a Lowerer of its own gives, on every shipped kernel (one of
// its instances at random) and on a long program where one unit runs far ahead of the others.
TEST(KernelLowering, SharedWalkGivesEachUnitItsOwnStreamInAnyInterleaving) {
    PeConfig pe = trn1_pe();
    test::XorShift64 rng{0x9e3779b97f4a7c15ull};
    int checked = 0;
    for (const auto& entry : std::filesystem::directory_iterator(test::source_path("configs/kernels"))) {
        KernelProgram p = KernelProgram::load(entry.path().string());
        Layout l = make_layout(p, pe, 8);
        uint32_t instance = uint32_t(rng() % l.grid);
        if (count_instructions(p, l, instance, uint64_t(1) << 40) > 60000)
            continue;  // the whole suite's budget: a long program is below
        expect_interleavings_match(p, l, instance, pe, rng);
        ++checked;
    }
    EXPECT_GE(checked, 8);
    json j = program(json::array({json::parse(R"({"loop": "i", "trip": 6000, "body": [
        {"op": "dma", "dst": {"buf": "t", "copy": "i"}, "src": {"tensor": "x", "index": [["i % 4 * 128", 128], [0, "cols"]]}},
        {"op": "tensor_scalar", "dst": {"buf": "u", "copy": "i"}, "src": {"buf": "t", "copy": "i"}, "operator0": "multiply", "operand0": 2},
        {"op": "dma", "dst": {"tensor": "y", "index": [["i % 4 * 128", 128], [0, "cols"]]}, "src": {"buf": "u", "copy": "i"}}]})")}));
    KernelProgram p = KernelProgram::from_json(j, "long.json");
    Layout l = make_layout(p, pe, 1);
    for (int trial = 0; trial < 3; ++trial)
        expect_interleavings_match(p, l, 0, pe, rng);
}

TEST(KernelLowering, StridedDmaPatternsGiveOneDescriptorPerRun) {
    // Rows 128 x 256 bf16 of a 512 x 256 tensor: one contiguous 64 KiB block -> 2 descriptors of
    // 32 KiB; columns 0..127 of every row: 128 runs of 256 B.
    json block = load_row("0", "1");
    json cols = json::parse(R"({"op": "dma", "dst": {"buf": "t", "f": [[0, 128]]},
        "src": {"tensor": "x", "offset": 0, "ap": [["cols", 128], [1, 128]]}})");
    auto ins = lower_all(program(json::array({block, cols})));
    ASSERT_EQ(ins.size(), 2u);
    std::vector<DmaRun> runs;
    EXPECT_EQ(dma_descriptors(ins[0].first, 32768, runs), 2u);
    runs.clear();
    EXPECT_EQ(dma_descriptors(ins[1].first, 32768, runs), 128u);
    EXPECT_EQ(runs[1].address - runs[0].address, 512u);
    EXPECT_EQ(runs[0].bytes, 256u);
    EXPECT_EQ(dma_descriptor_count(ins[1].first, 32768), 128u);
}

TEST(KernelSchema, ListsEveryOpAndKeyTheLoaderTakes) {
    json schema = kernel_schema();
    const json& ops = schema["$defs"]["instruction"]["oneOf"];
    ASSERT_EQ(ops.size(), op_specs().size());
    for (size_t i = 0; i < ops.size(); ++i) {
        EXPECT_EQ(ops[i]["properties"]["op"]["const"], op_specs()[i].name);
        for (auto& f : op_specs()[i].fields)
            EXPECT_TRUE(ops[i]["properties"].contains(f.name)) << op_specs()[i].name << "." << f.name;
    }
    std::string md = kernel_format_markdown();
    for (auto& s : op_specs())
        EXPECT_NE(md.find(std::string("`") + s.name + "`"), std::string::npos) << s.name;
}
