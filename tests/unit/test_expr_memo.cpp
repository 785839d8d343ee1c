// The kernel expression's memo of its last value (Expr::eval), which makes the walk cheaper without
// changing a figure: held to a fresh evaluation on random expressions and loop-like variable sequences.
#include "models/kernel/expr.h"
#include "tests/xorshift.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

using namespace nctlm;
using namespace nctlm::kernel;

namespace {

std::string random_int_expr(test::XorShift64& rng, const std::vector<std::string>& names, int depth) {
    if (depth == 0 || rng() % 4 == 0) {
        static const char* constants[] = {"0", "1", "2", "3", "7", "128", "3072", "9223372036854775807"};
        return rng() % 2 ? names[rng() % names.size()] : constants[rng() % 8];
    }
    std::string a = random_int_expr(rng, names, depth - 1), b = random_int_expr(rng, names, depth - 1);
    static const char* binary[] = {"+", "-", "*", "//", "%", "==", "!=", "<", "<=", ">", ">=", "and", "or"};
    switch (rng() % 5) {
    case 0:
        return fmt::format("-({})", a);
    case 1:
        return fmt::format("{}({}, {})", rng() % 2 ? "min" : "max", a, b);
    default:
        return fmt::format("({}) {} ({})", a, binary[rng() % 13], b);
    }
}

std::string outcome(const Expr& e, const std::vector<int64_t>& vars) {
    try {
        return fmt::format("{}", e.eval(vars.data()));
    } catch (const KernelError& err) {
        return std::string("error: ") + err.what();
    }
}

} // namespace

TEST(ExprMemo, MemoisedExpressionsAndTheirTwinsEvaluateAsAFreshOneOverLoopLikeVariableSequences) {
    Symbols s;
    std::vector<std::string> names = {"i", "bm", "bn", "bk"};
    for (auto& n : names)
        s.add(n);
    test::XorShift64 rng{0x5eed1234};
    int memo_hits_possible = 0, errors = 0;
    for (int n = 0; n < 3000; ++n) {
        std::string text = random_int_expr(rng, names, 1 + int(rng() % 4));
        Expr memo;
        try {
            memo = Expr::parse(text, s);
        } catch (const KernelError&) {
            continue;
        }
        Expr twin = Expr::parse(text, s);
        twin.share_memo(memo);
        // A loop nest's walk: each step changes one variable (the inner most often), with values
        // that repeat, go negative and provoke overflow and division by zero.
        std::vector<int64_t> vars(names.size(), 0);
        static const int64_t values[] = {0, 1, -1, 2, 24, 128, INT64_MAX, INT64_MIN};
        for (int step = 0; step < 40; ++step) {
            size_t v = rng() % 3 ? names.size() - 1 : rng() % names.size();
            vars[v] = rng() % 2 ? values[rng() % 8] : (vars[v] == INT64_MAX ? INT64_MIN : vars[v] + 1);  // wraps, defined
            // The reference: parsed afresh, so nothing is remembered.
            std::string want = outcome(Expr::parse(text, s), vars);
            ASSERT_EQ(outcome(memo, vars), want) << text << " at step " << step;
            ASSERT_EQ(outcome(memo, vars), want) << text << " (again) at step " << step;
            // A twin of the same code shares the memo: evaluated at other variables in between.
            std::vector<int64_t> other = vars;
            other[rng() % names.size()] = values[rng() % 8];
            ASSERT_EQ(outcome(twin, other), outcome(Expr::parse(text, s), other)) << text << " (twin)";
            ASSERT_EQ(outcome(memo, vars), want) << text << " after its twin, at step " << step;
            errors += want.rfind("error", 0) == 0;
            ++memo_hits_possible;
        }
        // Folding keeps what the memo reads right: a folded copy, then a loop variable only.
        Expr folded = memo.fold(vars.data(), 1);
        for (int step = 0; step < 10; ++step) {
            vars[names.size() - 1] = values[rng() % 8];
            std::vector<int64_t> same = vars;
            ASSERT_EQ(outcome(folded, vars), outcome(Expr::parse(text, s), same)) << text;
        }
    }
    EXPECT_GT(memo_hits_possible, 10000);
    EXPECT_GT(errors, 100);  // the error paths were exercised
}
