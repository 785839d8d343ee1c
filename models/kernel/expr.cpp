#include "models/kernel/expr.h"

#include "models/common/config.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fmt/format.h>

namespace nctlm::kernel {

int Symbols::add(const std::string& name) {
    names_.push_back(name);
    slot_of_.push_back(slots_);
    return slots_++;
}

int Symbols::find(const std::string& name) const {
    for (size_t i = names_.size(); i-- > 0;)
        if (names_[i] == name)
            return slot_of_[i];
    return -1;
}

void Symbols::pop(size_t to_size) {
    names_.resize(to_size);
    slot_of_.resize(to_size);
}

namespace {

using Code = Expr::Code;
using Step = Expr::Step;

int64_t floor_div(int64_t a, int64_t b) {
    if (b == 0)
        throw KernelError("division by zero");
    if (a == INT64_MIN && b == -1)
        throw KernelError("integer overflow");
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0)))
        --q;
    return q;
}

int64_t floor_mod(int64_t a, int64_t b) {
    if (b == 0)
        throw KernelError("modulo by zero");
    if (b == -1)
        return 0;
    int64_t r = a % b;
    if (r != 0 && ((r < 0) != (b < 0)))
        r += b;
    return r;
}

// The operators integer and real expressions share: min/max, comparisons, logic (1 or 0).
template <class T> T apply_common(Code c, T a, T b) {
    switch (c) {
    case Code::Min:
        return std::min(a, b);
    case Code::Max:
        return std::max(a, b);
    case Code::Eq:
        return a == b;
    case Code::Ne:
        return a != b;
    case Code::Lt:
        return a < b;
    case Code::Le:
        return a <= b;
    case Code::Gt:
        return a > b;
    case Code::Ge:
        return a >= b;
    case Code::And:
        return a != 0 && b != 0;
    case Code::Or:
        return a != 0 || b != 0;
    default:
        return 0;
    }
}

int64_t apply(Code c, int64_t a, int64_t b) {
    int64_t r = 0;
    switch (c) {
    case Code::Add:
        if (__builtin_add_overflow(a, b, &r))
            throw KernelError("integer overflow");
        return r;
    case Code::Sub:
        if (__builtin_sub_overflow(a, b, &r))
            throw KernelError("integer overflow");
        return r;
    case Code::Mul:
        if (__builtin_mul_overflow(a, b, &r))
            throw KernelError("integer overflow");
        return r;
    case Code::FloorDiv:
        return floor_div(a, b);
    case Code::Mod:
        return floor_mod(a, b);
    default:
        return apply_common(c, a, b);
    }
}

int64_t real_bits(double v) {
    int64_t bits = 0;
    std::memcpy(&bits, &v, sizeof bits);
    return bits;
}

double bits_real(int64_t bits) {
    double v = 0;
    std::memcpy(&v, &bits, sizeof v);
    return v;
}

// Recursive descent over the grammar of docs/kernels.md, emitting postfix code. `real`: the real
// grammar (also '/', '**' as Python binds it, decimal literals).
class Parser {
public:
    Parser(const std::string& text, const Symbols& symbols, bool real = false)
        : s_(text), symbols_(symbols), real_(real) {}
    std::vector<Step> run() {
        parse_or();
        skip();
        if (pos_ != s_.size())
            fail(fmt::format("unexpected '{}'", s_.substr(pos_, 8)));
        return std::move(out_);
    }

private:
    [[noreturn]] void fail(const std::string& what) const {
        throw KernelError(fmt::format("expression '{}': {} (at column {})", s_, what, pos_ + 1));
    }
    void skip() {
        while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_])))
            ++pos_;
    }
    bool eat(const char* token) {
        skip();
        size_t n = std::char_traits<char>::length(token);
        if (s_.compare(pos_, n, token) != 0)
            return false;
        // A keyword must not run into a name ("order" is not "or" + "der").
        if (std::isalpha(static_cast<unsigned char>(token[0])) && pos_ + n < s_.size() &&
            (std::isalnum(static_cast<unsigned char>(s_[pos_ + n])) || s_[pos_ + n] == '_'))
            return false;
        pos_ += n;
        return true;
    }
    void emit(Code c, int64_t v = 0) { out_.push_back({c, v}); }
    void parse_or() {
        parse_and();
        while (eat("or")) {
            parse_and();
            emit(Code::Or);
        }
    }
    void parse_and() {
        parse_not();
        while (eat("and")) {
            parse_not();
            emit(Code::And);
        }
    }
    void parse_not() {
        if (eat("not")) {
            parse_not();
            emit(Code::Not);
            return;
        }
        parse_compare();
    }
    void parse_compare() {
        parse_sum();
        static const std::pair<const char*, Code> ops[] = {{"==", Code::Eq}, {"!=", Code::Ne}, {"<=", Code::Le},
                                                           {">=", Code::Ge}, {"<", Code::Lt},  {">", Code::Gt}};
        for (auto& [tok, code] : ops)
            if (eat(tok)) {
                parse_sum();
                emit(code);
                return;
            }
    }
    void parse_sum() {
        parse_term();
        while (true) {
            if (eat("+")) {
                parse_term();
                emit(Code::Add);
            } else if (eat("-")) {
                parse_term();
                emit(Code::Sub);
            } else {
                return;
            }
        }
    }
    void parse_term() {
        parse_unary();
        while (true) {
            if (eat("*")) {
                parse_unary();
                emit(Code::Mul);
            } else if (eat("//")) {
                parse_unary();
                emit(Code::FloorDiv);
            } else if (eat("%")) {
                parse_unary();
                emit(Code::Mod);
            } else if (real_ && eat("/")) {
                parse_unary();
                emit(Code::Div);
            } else {
                skip();
                if (pos_ < s_.size() && s_[pos_] == '/')
                    fail("'/' is not integer division: use '//'");
                return;
            }
        }
    }
    void parse_unary() {
        if (eat("-")) {
            parse_unary();
            emit(Code::Neg);
        } else if (eat("+")) {
            parse_unary();
        } else {
            parse_primary();
            if (real_ && eat("**")) {  // binds tighter than a unary minus on its left, not on its right
                parse_unary();
                emit(Code::Pow);
            }
        }
    }
    // A decimal literal of the real grammar (1.5, 1e-05, 2.5E3) starting at pos_, or false.
    bool real_literal() {
        size_t end = pos_;
        while (end < s_.size() && std::isdigit(static_cast<unsigned char>(s_[end])))
            ++end;
        bool real = false;
        if (end < s_.size() && s_[end] == '.') {
            real = true;
            ++end;
            while (end < s_.size() && std::isdigit(static_cast<unsigned char>(s_[end])))
                ++end;
        }
        if (end < s_.size() && (s_[end] == 'e' || s_[end] == 'E')) {
            size_t e = end + 1;
            if (e < s_.size() && (s_[e] == '+' || s_[e] == '-'))
                ++e;
            if (e < s_.size() && std::isdigit(static_cast<unsigned char>(s_[e]))) {
                real = true;
                end = e;
                while (end < s_.size() && std::isdigit(static_cast<unsigned char>(s_[end])))
                    ++end;
            }
        }
        if (!real)
            return false;
        if (!real_)
            fail("a real number in an integer expression");
        double v = std::strtod(s_.substr(pos_, end - pos_).c_str(), nullptr);
        if (!std::isfinite(v))
            fail("number out of range");
        emit(Code::RealConst, real_bits(v));
        pos_ = end;
        return true;
    }
    void parse_primary() {
        skip();
        if (pos_ >= s_.size())
            fail("unexpected end");
        char c = s_[pos_];
        if (std::isdigit(static_cast<unsigned char>(c)) && real_literal())
            return;
        if (std::isdigit(static_cast<unsigned char>(c))) {
            int64_t v = 0;
            while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) {
                if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, s_[pos_] - '0', &v))
                    fail("number too large");
                ++pos_;
            }
            emit(Code::Const, v);
            return;
        }
        if (c == '(') {
            ++pos_;
            parse_or();
            if (!eat(")"))
                fail("missing ')'");
            return;
        }
        if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
            size_t start = pos_;
            while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_'))
                ++pos_;
            std::string name = s_.substr(start, pos_ - start);
            if ((name == "min" || name == "max") && eat("(")) {
                parse_or();
                if (!eat(","))
                    fail("expected ',' in " + name + "(a, b)");
                parse_or();
                if (!eat(")"))
                    fail("missing ')'");
                emit(name == "min" ? Code::Min : Code::Max);
                return;
            }
            if (name == "True" || name == "False") {
                emit(Code::Const, name == "True");
                return;
            }
            int slot = symbols_.find(name);
            if (slot < 0) {
                std::string hint = did_you_mean(name, symbols_.names());
                fail(fmt::format("unknown name '{}'{}", name, hint.empty() ? "" : "; did you mean '" + hint + "'?"));
            }
            emit(Code::Var, slot);
            return;
        }
        fail(fmt::format("unexpected '{}'", c));
    }

    const std::string& s_;
    const Symbols& symbols_;
    bool real_ = false;
    size_t pos_ = 0;
    std::vector<Step> out_;
};

int64_t run(const std::vector<Step>& code, const int64_t* vars) {
    int64_t stack[64];
    int sp = 0;
    for (const Step& s : code) {
        switch (s.code) {
        case Code::Const:
            stack[sp++] = s.value;
            break;
        case Code::Var:
            stack[sp++] = vars[s.value];
            break;
        case Code::Neg:
            if (stack[sp - 1] == INT64_MIN)
                throw KernelError("integer overflow");
            stack[sp - 1] = -stack[sp - 1];
            break;
        case Code::Not:
            stack[sp - 1] = !stack[sp - 1];
            break;
        default:
            stack[sp - 2] = apply(s.code, stack[sp - 2], stack[sp - 1]);
            --sp;
        }
    }
    return stack[0];
}

double apply_real(Code c, double a, double b) {
    switch (c) {
    case Code::Add:
        return a + b;
    case Code::Sub:
        return a - b;
    case Code::Mul:
        return a * b;
    case Code::Div:
        if (b == 0)
            throw KernelError("division by zero");
        return a / b;
    case Code::Pow:
        return std::pow(a, b);
    case Code::FloorDiv:
        if (b == 0)
            throw KernelError("division by zero");
        return std::floor(a / b);
    case Code::Mod:
        if (b == 0)
            throw KernelError("modulo by zero");
        return a - b * std::floor(a / b);
    default:
        return apply_common(c, a, b);
    }
}

double run_real(const std::vector<Step>& code, const int64_t* vars) {
    double stack[64];
    int sp = 0;
    for (const Step& s : code) {
        switch (s.code) {
        case Code::Const:
            stack[sp++] = double(s.value);
            break;
        case Code::RealConst:
            stack[sp++] = bits_real(s.value);
            break;
        case Code::Var:
            stack[sp++] = double(vars[s.value]);
            break;
        case Code::Neg:
            stack[sp - 1] = -stack[sp - 1];
            break;
        case Code::Not:
            stack[sp - 1] = stack[sp - 1] == 0;
            break;
        default:
            stack[sp - 2] = apply_real(s.code, stack[sp - 2], stack[sp - 1]);
            --sp;
        }
    }
    if (!std::isfinite(stack[0]))
        throw KernelError("the value is not a finite number");
    return stack[0];
}

// Deepest stack the postfix code needs.
int depth(const std::vector<Step>& code) {
    int sp = 0, most = 0;
    for (const Step& s : code) {
        if (s.code == Code::Const || s.code == Code::Var || s.code == Code::RealConst)
            ++sp;
        else if (s.code != Code::Neg && s.code != Code::Not)
            --sp;
        most = std::max(most, sp);
    }
    return most;
}

} // namespace

Expr Expr::constant(int64_t v) {
    Expr e;
    e.code_ = {{Code::Const, v}};
    e.text_ = std::to_string(v);
    e.index_slots();
    return e;
}

Expr Expr::compile(const std::string& text, const Symbols& symbols, bool real) {
    Expr e;
    e.text_ = text;
    e.real_ = real;
    e.code_ = Parser(text, symbols, real).run();
    if (depth(e.code_) > 64)
        throw KernelError(fmt::format("expression '{}': nested too deeply", text));
    e.constant_ = true;
    for (const Step& s : e.code_)
        e.constant_ = e.constant_ && s.code != Code::Var;
    if (e.constant_) {
        try {
            e.code_ = {real ? Step{Code::RealConst, real_bits(run_real(e.code_, nullptr))}
                            : Step{Code::Const, run(e.code_, nullptr)}};
        } catch (const KernelError& err) {
            throw KernelError(fmt::format("expression '{}': {}", text, err.what()));
        }
    }
    e.index_slots();
    return e;
}

Expr Expr::parse(const std::string& text, const Symbols& symbols) { return compile(text, symbols, false); }

Expr Expr::parse_real(const std::string& text, const Symbols& symbols) { return compile(text, symbols, true); }

double Expr::eval_real(const int64_t* vars) const {
    if (code_.empty())
        return 0;
    try {
        return run_real(code_, vars);
    } catch (const KernelError& err) {
        throw KernelError(fmt::format("expression '{}': {}", text_, err.what()));
    }
}

void Expr::index_slots() {
    memo_slots_ = real_ ? -1 : 0;
    for (const Step& s : code_) {
        if (s.code != Code::Var || memo_slots_ < 0)
            continue;
        int slot = int(s.value);
        if (std::find(memo_slot_, memo_slot_ + memo_slots_, slot) != memo_slot_ + memo_slots_)
            continue;
        if (memo_slots_ == 2)
            memo_slots_ = -1;
        else
            memo_slot_[memo_slots_++] = slot;
    }
    if (memo_slots_ == 1)
        memo_slot_[1] = memo_slot_[0];
    if (memo_slots_ <= 0)
        memo_slots_ = -1;  // no variable: a constant, or code that throws whenever it runs
    memo_ = memo_slots_ > 0 ? std::make_shared<Memo>() : nullptr;
}

std::vector<std::pair<int, int64_t>> Expr::code_key() const {
    std::vector<std::pair<int, int64_t>> key;
    for (const Step& s : code_)
        key.push_back({int(s.code), s.value});
    return key;
}

int64_t Expr::run_code(const int64_t* vars) const {
    if (code_.empty())
        return 0;
    try {
        int64_t v = run(code_, vars);  // a throw leaves the memo as it was: the next call throws too
        if (memo_slots_ > 0) {
            memo_->key[0] = vars[memo_slot_[0]];
            memo_->key[1] = vars[memo_slot_[1]];
            memo_->value = v;
            memo_->valid = true;
        }
        return v;
    } catch (const KernelError& err) {
        throw KernelError(fmt::format("expression '{}': {}", text_, err.what()));
    }
}

namespace {

// A piece of postfix code while folding: a known value is a single Const or RealConst step.
struct Piece {
    std::vector<Step> code;
    bool known = false;
};

// The value of `op` over known operands, by the evaluator itself (one code path for both), or
// false where the evaluation throws: that stays code, to throw when (and if) it is evaluated.
bool foldable(Code op, bool real, const Step& a, const Step* b, Step& out) {
    std::vector<Step> code{a};
    if (b)
        code.push_back(*b);
    code.push_back({op, 0});
    try {
        out = real ? Step{Code::RealConst, real_bits(run_real(code, nullptr))} : Step{Code::Const, run(code, nullptr)};
        return true;
    } catch (const KernelError&) {
        return false;  // run_real's not-finite check included: an intermediate infinity stays code
    }
}

} // namespace

Expr Expr::fold(const int64_t* vars, int known_slots) const {
    std::vector<Piece> stack;
    for (const Step& s : code_) {
        if (s.code == Code::Const || s.code == Code::RealConst) {
            stack.push_back({{s}, true});
        } else if (s.code == Code::Var) {
            bool known = s.value < known_slots;
            stack.push_back({{known ? Step{Code::Const, vars[s.value]} : s}, known});
        } else if (s.code == Code::Neg || s.code == Code::Not) {
            Piece& a = stack.back();
            Step folded{};
            if (a.known && foldable(s.code, real_, a.code[0], nullptr, folded))
                a.code = {folded};
            else {
                a.code.push_back(s);
                a.known = false;
            }
        } else {
            Piece b = std::move(stack.back());
            stack.pop_back();
            Piece& a = stack.back();
            Step folded{};
            if (a.known && b.known && foldable(s.code, real_, a.code[0], &b.code[0], folded)) {
                a.code = {folded};
                continue;
            }
            a.code.insert(a.code.end(), b.code.begin(), b.code.end());
            a.code.push_back(s);
            a.known = false;
        }
    }
    Expr e = *this;
    if (!stack.empty()) {
        e.code_ = std::move(stack.back().code);
        e.constant_ = stack.back().known;
    }
    e.index_slots();
    return e;
}

bool Expr::uses(int slot) const {
    for (const Step& s : code_)
        if (s.code == Code::Var && s.value == slot)
            return true;
    return false;
}

} // namespace nctlm::kernel
