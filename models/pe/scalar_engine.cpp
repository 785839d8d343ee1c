#include "models/pe/scalar_engine.h"

#include "models/common/sim.h"

#include <algorithm>

namespace nctlm {

ScalarEngine::ScalarEngine(sc_core::sc_module_name name, const PeConfig& cfg)
    : sc_module(name), psum_socket("psum_socket"), sbuf_socket("sbuf_socket"), cfg_(cfg),
      ops_(stats().counter(std::string(this->name()) + ".ops", "")),
      busy_ns_(stats().counter(std::string(this->name()) + ".busy_ns", "ns")) {}

bool ScalarEngine::activation(const Instruction& ins) {
    sc_core::sc_time d = to_sc(cfg_.scalar_op_time(ins.n_free, ins.partitions, ins.inputs));
    bool ok = true;
    // Operands from PSUM (scores) and/or SBUF, the result into SBUF; all overlap the op.
    if (ins.psum_bytes > 0) {
        d = std::max(d, psum_read_.run(psum_socket, false, 0, ins.partitions, 0, ins.psum_bytes));
        ok = ok && psum_read_.ok();
    }
    if (ins.sbuf_read_bytes > 0) {
        d = std::max(d, sbuf_read_.run(sbuf_socket, false, 0, ins.partitions, ins.offset, ins.sbuf_read_bytes));
        ok = ok && sbuf_read_.ok();
    }
    if (ins.bytes > 0) {
        d = std::max(d, write_.run(sbuf_socket, true, 0, ins.partitions, ins.offset, ins.bytes));
        ok = ok && write_.ok();
    }
    ops_.add(1);
    busy_ns_.add(ns(d));
    sc_core::wait(d);
    return ok;
}

} // namespace nctlm
