// A kernel program (docs/kernels.md, format version 1): HBM tensors, SBUF/PSUM buffers and a body
// of instructions, loops and conditionals whose numbers are expressions. Loaded from JSON and
// checked structurally here (names, keys, ops, expressions); shapes are checked once the arguments
// are bound (kernel_layout.h) and every access while the program expands (kernel_walk.h). Pure C++.
#pragma once

#include "models/kernel/expr.h"
#include "models/pe/engine_timing.h"

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

namespace nctlm::kernel {

inline constexpr int kFormatVersion = 1;

enum class Memory { Sbuf, Psum, Hbm, Staging };
const char* memory_name(Memory m);

// An element type: the PE's Dtype for engine costs, plus int32 (moves like fp32, no matmul).
struct ElemType {
    std::string name = "bf16";
    Dtype dtype = Dtype::Bf16;
    uint32_t bytes = 2;
    bool integer = false;
};
ElemType parse_elem_type(const std::string& text);  // throws KernelError

enum class Placement { Local, Stack, Interleaved };

struct Tensor {
    std::string name, kind = "input", path;  // kind: input | output | scratch
    std::vector<Expr> shape;
    ElemType type;
    Placement placement = Placement::Local;
    uint32_t stack = 0;  // Placement::Stack
    bool per_instance = false;
    // Explicit placement: the byte offset of the tensor (of instance `pid`'s copy) from the start of
    // its stack or of the interleaved window; unset: placed after the others (KernelLaunch::place).
    bool has_offset = false;
    Expr offset;
};

struct Buffer {
    std::string name, path;
    Memory memory = Memory::Sbuf;
    Expr partitions, bufs;
    std::vector<Expr> shape;  // free dimensions of one partition
    ElemType type;
    bool resident = false;    // holds data an earlier kernel left (weights): may be read before written
};

// An instruction operand. Chip: a box of one copy of an SBUF/PSUM buffer. Hbm: an access
// pattern over a tensor (elements; the box form is turned into one at load). Number: an immediate.
struct Operand {
    enum class Kind { None, Chip, Hbm, Number } kind = Kind::None;
    int index = -1;  // buffer (Chip) or tensor (Hbm)
    // Chip.
    Expr copy;
    bool p_whole = true;
    Expr p_start, p_size;
    bool f_whole = true;
    std::vector<Expr> f_start, f_size;
    // Hbm: element (i0, i1, ...) at offset + sum(i_d x stride_d); ap[d] = (stride, count).
    Expr offset;
    bool has_instance = false;  // Hbm, per-instance tensor: another instance's copy
    Expr instance;
    std::vector<std::pair<Expr, Expr>> ap;
    double number = 0;
    bool has_real = false;  // Number given as a real expression of the arguments ("1 / COLS")
    Expr real;
    bool present() const { return kind != Kind::None; }
};

enum class KernelOp {
    Dma, Matmul, Transpose, Fetch, TensorCopy, TensorTensor, TensorScalar, TensorReduce, Select, Memset, Iota,
    Activation, Barrier
};
const char* op_name(KernelOp op);

enum class Engine { Tensor, Vector, Scalar };

// Every op of the format with its keys: the one table the loader, the JSON Schema
// (kernel_schema.h) and `nctlm describe kernel` read.
enum class FieldKind { Operand, OperandList, OperandOrNumber, Expr, Integer, Number, Bool, String, Engine, Queue };
struct OpField {
    const char* name;
    FieldKind kind;
    bool required;
};
struct OpSpec {
    KernelOp op;
    const char* name;
    const char* engine;
    const char* doc;
    std::vector<OpField> fields;
};
const std::vector<OpSpec>& op_specs();
const OpSpec& op_spec(KernelOp op);

struct Instr {
    KernelOp op = KernelOp::Dma;
    std::string path, line;  // JSON pointer ("/body/0/body/2") and the kernel's file:line ("" if none)
    std::string what;        // activation func, ALU operator or reduce kind, for traces and reports
    Engine engine = Engine::Vector;
    Operand dst;
    std::vector<Operand> reads;  // in role order (see op_reads in kernel_program.cpp)
    std::vector<Operand> more_dst;  // fetch: the other staged operands; activation: the free-axis sum (reduce)
    Expr start, stop;            // matmul: 1 overwrites dst, 0 accumulates; stop is informational
    int queue = -1;              // dma: -1 automatic
    uint64_t descriptor_bytes = 0;
    bool spread = true;          // dma: descriptors over the engines' queues, as the hardware spreads a transfer
    bool prebuilt = false;       // dma: 1-D descriptors built ahead, no run-time descriptor generation
    bool grid_scope = false;     // barrier: every instance of the grid
    bool has_tile = false;
    Expr tile;                   // optional: groups instructions into per-tile stage records
    std::vector<Expr> numbers;   // scalar operands given as real expressions (checked once the arguments are bound)
    // Where an error about this instruction points: "path (line)".
    std::string where() const { return line.empty() ? path : path + " (" + line + ")"; }
};

struct Node {
    enum class Kind { Instr, Loop, If } kind = Kind::Instr;
    int instr = -1;
    int slot = -1;  // loop variable
    Expr trip, start, step, cond;
    std::vector<Node> body, orelse;
    std::string path;
};

struct KernelProgram {
    std::string name, source, file;  // file: where it was loaded from
    std::vector<std::string> arg_names;
    std::vector<int64_t> arg_values;  // defaults, then --set kernel.NAME overrides (set_arg)
    int pid_slot = 0;                 // after the arguments
    int slots = 0;                    // the variable array eval() reads
    Expr grid;
    std::vector<Tensor> tensors;
    std::vector<Buffer> buffers;
    std::vector<Instr> instrs;
    std::vector<Node> body;

    static KernelProgram from_json(const nlohmann::json& j, const std::string& file);  // throws KernelError
    static KernelProgram load(const std::string& path);                                 // throws KernelError
    void set_arg(const std::string& name, int64_t value);                         // throws KernelError
};

// Whether any expression of the program reads `pid`: if none does, every instance of the grid
// runs the same instructions (and a check of one holds for all).
bool uses_pid(const KernelProgram& p);

} // namespace nctlm::kernel
