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
    d = operands_.run(psum_socket, sbuf_socket, d, ins, ok);
    ops_.add(1);
    busy_ns_.add(ns(d));
    sc_core::wait(d);
    return ok;
}

} // namespace nctlm
