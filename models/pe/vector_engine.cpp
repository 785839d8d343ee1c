#include "models/pe/vector_engine.h"

#include "models/common/sim.h"

#include <algorithm>

namespace nctlm {

VectorEngine::VectorEngine(sc_core::sc_module_name name, const PeConfig& cfg)
    : sc_module(name), psum_socket("psum_socket"), sbuf_socket("sbuf_socket"), cfg_(cfg),
      ops_(stats().counter(std::string(this->name()) + ".ops", "")),
      busy_ns_(stats().counter(std::string(this->name()) + ".busy_ns", "ns")) {}

namespace {
// PSUM holds fp32 accumulators: an op reading it streams fp32 whatever the matmul's input type.
VectorOperands operands_of(const Instruction& ins, bool reads_psum) {
    return {reads_psum ? Dtype::Fp32 : ins.dtype, reads_psum};
}
} // namespace

bool VectorEngine::copy(const Instruction& ins) {
    sc_core::sc_time op = to_sc(cfg_.vector_op_time(ins.n_free, 1, operands_of(ins, true)));
    sc_core::sc_time rd = operands_.psum_read.run(psum_socket, false, ins.partition, ins.partitions, 0, ins.psum_bytes);
    sc_core::sc_time wr = operands_.write.run(sbuf_socket, true, ins.partition, ins.partitions, ins.offset, ins.bytes);
    sc_core::sc_time d = std::max(op, std::max(rd, wr));
    ops_.add(1);
    busy_ns_.add(ns(d));
    sc_core::wait(d);
    return operands_.psum_read.ok() && operands_.write.ok();
}

bool VectorEngine::op(const Instruction& ins) {
    sc_core::sc_time d = to_sc(cfg_.vector_op_time(ins.n_free, ins.inputs, operands_of(ins, ins.psum_bytes > 0)));
    bool ok = true;
    d = operands_.run(psum_socket, sbuf_socket, d, ins, ok);
    ops_.add(1);
    busy_ns_.add(ns(d));
    sc_core::wait(d);
    return ok;
}

} // namespace nctlm
