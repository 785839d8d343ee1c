// Folding a launch's arguments and pid into a kernel program's expressions (Expr::fold,
// fold_instance): the folded program evaluates, and walks, exactly as the loaded one, errors included.
#include "models/common/config.h"
#include "models/kernel/kernel_walk.h"
#include "tests/support.h"
#include "tests/xorshift.h"

#include <cmath>
#include <filesystem>
#include <fmt/format.h>
#include <gtest/gtest.h>

using namespace nctlm;
using namespace nctlm::kernel;

namespace {

// A random expression over the names given, with every operator of the grammar (the real one's too
// when `real`) and constants that provoke overflow, division and modulo by zero.
std::string random_expr(test::XorShift64& rng, const std::vector<std::string>& names, bool real, int depth) {
    if (depth == 0 || rng() % 4 == 0) {
        static const char* constants[] = {"0", "1", "2", "3", "7", "128", "4096", "9223372036854775807"};
        if (rng() % 2)
            return names[rng() % names.size()];
        if (real && rng() % 5 == 0)
            return "0.5";
        return constants[rng() % (real ? 7 : 8)];
    }
    std::string a = random_expr(rng, names, real, depth - 1), b = random_expr(rng, names, real, depth - 1);
    static const char* binary[] = {"+", "-", "*", "//", "%", "==", "!=", "<", "<=", ">", ">=", "and", "or", "/", "**"};
    switch (rng() % 6) {
    case 0:
        return fmt::format("-({})", a);
    case 1:
        return fmt::format("not ({})", a);
    case 2:
        return fmt::format("{}({}, {})", rng() % 2 ? "min" : "max", a, b);
    default:
        return fmt::format("({}) {} ({})", a, binary[rng() % (real ? 15 : 13)], b);
    }
}

// The value, or the error's message: folding keeps both.
std::string outcome(const Expr& e, const std::vector<int64_t>& vars) {
    try {
        return e.is_real() ? fmt::format("{}", e.eval_real(vars.data())) : fmt::format("{}", e.eval(vars.data()));
    } catch (const KernelError& err) {
        return std::string("error: ") + err.what();
    }
}

} // namespace

TEST(KernelFold, FoldedExpressionsEvaluateAsTheUnfoldedOnRandomExpressionsAndVariables) {
    // Slots 0..2 are known (the arguments and pid), 3..4 are not (loop variables).
    Symbols s;
    std::vector<std::string> names = {"K", "BK", "pid", "i", "j"};
    for (auto& n : names)
        s.add(n);
    const int known = 3;
    EXPECT_EQ(Expr::parse("K // BK * i", s).fold(std::vector<int64_t>{4096, 128, 0, 0, 0}.data(), known).steps(), 3u);
    test::XorShift64 rng{0x51ab1e5eedull};
    int folded = 0, errors = 0;
    for (int trial = 0; trial < 4000; ++trial) {
        bool real = trial % 4 == 3;
        std::string text = random_expr(rng, names, real, 1 + int(rng() % 5));
        Expr e;
        try {
            e = real ? Expr::parse_real(text, s) : Expr::parse(text, s);
        } catch (const KernelError&) {
            continue;  // constant parts that fail at compile time (a literal division by zero)
        }
        std::vector<int64_t> vars(names.size());
        for (int64_t& v : vars)
            v = rng() % 3 == 0 ? int64_t(rng() % 5) - 2 : int64_t(rng() % 100001) - 50000;
        Expr f = e.fold(vars.data(), known);
        EXPECT_LE(f.steps(), e.steps()) << text;
        folded += f.steps() < e.steps();
        for (int run = 0; run < 4; ++run) {  // the known slots fixed, the others anything
            std::string want = outcome(e, vars);
            ASSERT_EQ(outcome(f, vars), want) << text << " with i=" << vars[3] << " j=" << vars[4];
            errors += want.rfind("error", 0) == 0;
            vars[3] = int64_t(rng() % 2001) - 1000;
            vars[4] = rng() % 4 == 0 ? 0 : int64_t(rng() % 2001) - 1000;
        }
    }
    // The corpus exercises both folding and the errors it must leave to the evaluation.
    EXPECT_GT(folded, 1000);
    EXPECT_GT(errors, 100);
}

namespace {

void expect_same_access(const ChipAccess& a, const ChipAccess& b) {
    EXPECT_EQ(a.buffer, b.buffer);
    EXPECT_EQ(a.copy, b.copy);
    EXPECT_EQ(a.p0, b.p0);
    EXPECT_EQ(a.np, b.np);
    EXPECT_EQ(a.b0, b.b0);
    EXPECT_EQ(a.b1, b.b1);
    EXPECT_EQ(a.elements, b.elements);
    EXPECT_EQ(a.elem_bytes, b.elem_bytes);
}

// Walks `p` and its fold for one instance side by side: every step's instruction and accesses agree.
void expect_same_walk(const KernelProgram& p, const Layout& l, uint32_t instance, uint64_t max_steps) {
    KernelProgram f = fold_instance(p, l, instance);
    Walker wp(p, l, instance), wf(f, l, instance);
    Step a, b;
    for (uint64_t n = 0; n < max_steps; ++n) {
        SCOPED_TRACE(fmt::format("{} instance {} step {}", p.name, instance, n));
        bool more = wp.next(a);
        ASSERT_EQ(wf.next(b), more);
        if (!more)
            return;
        ASSERT_EQ(a.ins - p.instrs.data(), b.ins - f.instrs.data());
        EXPECT_EQ(a.index, b.index);
        EXPECT_EQ(a.tile, b.tile);
        EXPECT_EQ(a.accumulate, b.accumulate);
        ASSERT_EQ(a.has_dst, b.has_dst);
        expect_same_access(a.dst, b.dst);
        ASSERT_EQ(a.n_reads, b.n_reads);
        for (int r = 0; r < a.n_reads; ++r)
            expect_same_access(a.reads[size_t(r)], b.reads[size_t(r)]);
        ASSERT_EQ(a.n_more_dst, b.n_more_dst);
        for (int d = 0; d < a.n_more_dst; ++d)
            expect_same_access(a.more_dst[size_t(d)], b.more_dst[size_t(d)]);
        ASSERT_EQ(a.has_hbm, b.has_hbm);
        EXPECT_EQ(a.hbm_write, b.hbm_write);
        EXPECT_EQ(a.hbm.tensor, b.hbm.tensor);
        EXPECT_EQ(a.hbm.address, b.hbm.address);
        EXPECT_EQ(a.hbm.lo, b.hbm.lo);
        EXPECT_EQ(a.hbm.hi, b.hbm.hi);
        EXPECT_EQ(a.hbm.dims, b.hbm.dims);
        EXPECT_EQ(a.hbm.stride, b.hbm.stride);
        EXPECT_EQ(a.hbm.count, b.hbm.count);
        EXPECT_EQ(a.hbm.partitions, b.hbm.partitions);
        if (::testing::Test::HasFailure())
            return;
    }
}

// Postfix steps over every expression the walk evaluates per instruction (operands, tile, start).
size_t operand_steps(const KernelProgram& p) {
    size_t n = 0;
    auto add = [&](const Operand& o) {
        n += o.copy.steps() + o.p_start.steps() + o.p_size.steps() + o.offset.steps() + o.instance.steps();
        for (size_t d = 0; d < o.f_start.size(); ++d)
            n += o.f_start[d].steps() + o.f_size[d].steps();
        for (auto& [stride, count] : o.ap)
            n += stride.steps() + count.steps();
    };
    for (const Instr& in : p.instrs) {
        add(in.dst);
        for (const Operand& o : in.reads)
            add(o);
        for (const Operand& o : in.more_dst)
            add(o);
        n += in.tile.steps() + in.start.steps();
    }
    return n;
}

} // namespace

// Every shipped kernel, each instance of its grid: the folded program walks as the loaded one (the
// first 20 000 steps of the long ones, for the suite's budget), and folding shortens the code of
// the kernels whose operands compute from their arguments.
TEST(KernelFold, FoldedShippedKernelsWalkAsTheLoadedOnes) {
    PeConfig pe = ConfigTree::from_file(test::platform("trn1")).load<PeConfig>("pe");
    int kernels = 0, shortened = 0;
    for (const auto& entry : std::filesystem::directory_iterator(test::source_path("configs/kernels"))) {
        KernelProgram p = KernelProgram::load(entry.path().string());
        Layout l = make_layout(p, pe, 8);
        for (uint32_t instance = 0; instance < l.grid; ++instance)
            expect_same_walk(p, l, instance, 20000);
        shortened += operand_steps(fold_instance(p, l, 0)) < operand_steps(p);
        ++kernels;
    }
    EXPECT_GE(kernels, 18);
    EXPECT_GE(shortened, 8);
}
