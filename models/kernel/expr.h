// Integer expressions of the kernel program format (docs/kernels.md, "Expressions"): compiled once
// at load time against a symbol table (arguments, `pid`, loop variables, each a slot), evaluated
// many times while loops expand. 64-bit signed arithmetic; overflow and division by zero throw.
// Real expressions (parse_real: the same grammar plus `/`, `**` and decimal literals, evaluated in
// double precision) are the scalar operands computed from arguments, e.g. "1 / COLS". Pure C++.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace nctlm::kernel {

// A problem in a kernel program: the message names where (JSON path, source line) when known.
struct KernelError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// Names visible to an expression, each bound to a slot of the variable array eval() reads.
class Symbols {
public:
    int add(const std::string& name);           // a new slot; shadows an outer binding of the name
    int find(const std::string& name) const;    // slot, or -1
    void pop(size_t to_size);                   // leave a scope: forget bindings made after size()
    size_t size() const { return names_.size(); }
    int slots() const { return slots_; }        // slots ever allocated (the array's length)
    std::vector<std::string> names() const { return names_; }

private:
    std::vector<std::string> names_;
    std::vector<int> slot_of_;
    int slots_ = 0;
};

class Expr {
public:
    Expr() = default;
    static Expr constant(int64_t v);
    // Throws KernelError for a syntax error or an unknown name (with a did-you-mean).
    static Expr parse(const std::string& text, const Symbols& symbols);
    static Expr parse_real(const std::string& text, const Symbols& symbols);
    int64_t eval(const int64_t* vars) const;  // throws KernelError (overflow, division by zero); inline below
    // The value without running code (a lone variable or constant, or the memo's): false if it needs eval().
    bool quick(const int64_t* vars, int64_t& value) const;
    double eval_real(const int64_t* vars) const;  // a real expression's value; throws KernelError (not finite)
    bool is_constant() const { return constant_; }
    bool is_real() const { return real_; }
    const std::string& text() const { return text_; }
    bool uses(int slot) const;  // whether the expression reads the slot
    // The expression with slots [0, known_slots) replaced by their values in `vars` and every
    // sub-expression of known values computed once (a launch's arguments and `pid` in
    // `K // BK * k`). Evaluates to the same value, or throws the same error, as this one for any
    // variables that agree on the known slots: a sub-expression whose evaluation throws stays code.
    Expr fold(const int64_t* vars, int known_slots) const;
    size_t steps() const { return code_.size(); }  // postfix steps (tests: folding shortens the code)
    // Postfix code as (code, value) pairs: equal for expressions that compute the same function.
    std::vector<std::pair<int, int64_t>> code_key() const;
    // Evaluations of this expression and `same` (same code_key) remember one last value.
    void share_memo(const Expr& same) {
        if (same.code_key() == code_key())
            memo_ = same.memo_;
    }

    enum class Code : uint8_t {
        Const, Var, Add, Sub, Mul, FloorDiv, Mod, Neg, Min, Max, Eq, Ne, Lt, Le, Gt, Ge, And, Or, Not,
        RealConst, Div, Pow  // real expressions only
    };
    struct Step {
        Code code;
        int64_t value;  // Const: the value; Var: the slot; RealConst: the double's bits
    };

private:
    int64_t run_code(const int64_t* vars) const;  // eval() past a single step
    void index_slots();                           // after code_ changes: the memo's key slots
    static Expr compile(const std::string& text, const Symbols& symbols, bool real);
    // The last value eval() computed, keyed by the variables the expression reads (one or two of
    // them; more, or none: no memo). A loop step changes few variables, so most operands of an
    // inner loop's instruction read only outer ones and repeat their last value. Copies, and
    // expressions of the same code (share_memo), share one memo: the value is the code's.
    struct Memo {
        int64_t key[2] = {};
        int64_t value = 0;
        bool valid = false;
    };
    int memo_slots_ = -1;                          // variables in the key, or -1: not memoised
    int memo_slot_[2] = {};                        // one variable: both the same slot
    std::shared_ptr<Memo> memo_;
    std::vector<Step> code_;  // postfix
    std::string text_;
    bool constant_ = true;
    bool real_ = false;
};

// A lone variable or constant (most operands, and more once folded) without a call.
inline bool Expr::quick(const int64_t* vars, int64_t& value) const {
    if (code_.size() == 1) {
        value = code_[0].code == Code::Const ? code_[0].value : vars[code_[0].value];
        return true;
    }
    if (memo_slots_ > 0 && memo_->valid && vars[memo_slot_[0]] == memo_->key[0] &&
        vars[memo_slot_[1]] == memo_->key[1]) {
        value = memo_->value;
        return true;
    }
    return false;
}

inline int64_t Expr::eval(const int64_t* vars) const {
    int64_t value = 0;
    return quick(vars, value) ? value : run_code(vars);
}

} // namespace nctlm::kernel
