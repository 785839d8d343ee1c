// Closed-form per-engine rooflines of the kernel library (kernels/NAME.py, configs/kernels/NAME.json;
// docs/kernels.md): for a kernel and its arguments, the instructions its program expands to, in
// closed form (counts x sizes), each costed as the PE costs it - the engine's rule
// (models/pe/engine_timing.h) or its operands' uncontended SBUF/PSUM port time, whichever is
// longer - the bytes every engine moves through the SBUF and PSUM partition ports (one read and
// one write port per partition, shared by the engines), and the bytes it moves over the PE's DMA
// issue rate, the tile's DMA engines and its local HBM stack. The roofline is the busiest of these;
// no latency, dependency or contention terms (a floor). A cross-check of the simulation only: reported figures come from the
// simulation. Pure C++, no SystemC.
#pragma once

#include "models/analytic/roofline.h"
#include "models/dma/dma_config.h"
#include "models/hbm/hbm_config.h"
#include "models/pe/pe_config.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace nctlm::analytic {

// A vector- or scalar-engine instruction as the kernel lowering hands it to the PE: the elements
// per partition it works on (the destination's; the source's for reductions and activations), the
// full-size operands (the vector rule's input count), the destination's type, and its operand
// bytes per partition read from PSUM and SBUF and written.
struct EngineOp {
    uint32_t free = 1;
    uint32_t inputs = 1;
    Dtype dtype = Dtype::Bf16;
    double psum_read = 0, sbuf_read = 0, write = 0;
    bool write_psum = false;
    uint32_t partitions = 128;
};

// The busy time and traffic of a run, accumulated instruction kind by instruction kind.
class KernelWork {
public:
    explicit KernelWork(const PeConfig& pe) : pe_(pe) {}
    // n matmuls: stationary k partitions x m, moving k x cols (dtype) -> PSUM m x cols fp32.
    void matmul(double n, uint32_t k, uint32_t m, uint32_t cols, Dtype dtype);
    // n transposes of a p x f tile (a matmul against the identity) into PSUM f x p of `dtype`.
    void transpose(double n, uint32_t p, uint32_t f, Dtype dtype);
    void vector(double n, const EngineOp& op);
    void scalar(double n, const EngineOp& op);
    // n DMA instructions of `bytes` each, HBM -> SBUF (in) or SBUF -> HBM.
    void dma(double n, double bytes, bool in);

    // One instruction's time on its engine, as the PE charges it.
    double vector_ns(const EngineOp& op) const;
    double scalar_ns(const EngineOp& op) const;
    double matmul_ns(uint32_t m, uint32_t cols, Dtype dtype, double psum_bytes) const;

    double tensor_ns = 0, vector_busy_ns = 0, scalar_busy_ns = 0;
    // Bytes per partition through the partition ports, every engine together.
    double sbuf_read = 0, sbuf_write = 0, psum_read = 0, psum_write = 0;
    double flops = 0;  // 2 K M N per matmul (transposes excluded), as the kernel testbench counts
    double bytes_in = 0, bytes_out = 0, dma_instructions = 0;
    double matmuls = 0, transposes = 0, vector_ops = 0, scalar_ops = 0;

private:
    double ports_ns(const EngineOp& op) const;
    void count_ports(double n, const EngineOp& op);
    PeConfig pe_;
};

struct KernelRoofline {
    std::string kernel;
    KernelWork work;
    std::vector<Ceiling> ceilings;  // hbm stack, dma engines, dma issue, tensor, vector, scalar, the ports
    Ceiling bound;                  // the largest: the roofline
};

// The library kernels a roofline exists for.
const std::vector<std::string>& library_kernels();

// `args`: the kernel's arguments by name (every one of the program's). Throws std::invalid_argument
// for a kernel outside the library, a missing argument, or values the kernel does not take
// (shapes its program refuses: e.g. M not a multiple of BM).
KernelRoofline kernel_roofline(const std::string& kernel, const std::map<std::string, int64_t>& args,
                               const PeConfig& pe, const DmaConfig& dma, const HbmConfig& hbm);

} // namespace nctlm::analytic
