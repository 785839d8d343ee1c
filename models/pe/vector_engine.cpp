#include "models/pe/vector_engine.h"

#include "models/common/sim.h"

#include <algorithm>

namespace nctlm {

VectorEngine::VectorEngine(sc_core::sc_module_name name, const PeConfig& cfg)
    : sc_module(name), psum_socket("psum_socket"), sbuf_socket("sbuf_socket"), cfg_(cfg),
      ops_(stats().counter(std::string(this->name()) + ".ops", "")),
      busy_ns_(stats().counter(std::string(this->name()) + ".busy_ns", "ns")) {}

bool VectorEngine::copy(const Instruction& ins) {
    sc_core::sc_time op = to_sc(cfg_.vector_op_time(ins.n_free));
    sc_core::sc_time rd = read_.run(psum_socket, false, 0, ins.partitions, 0, ins.psum_bytes);
    sc_core::sc_time wr = write_.run(sbuf_socket, true, 0, ins.partitions, ins.offset, ins.bytes);
    sc_core::sc_time d = std::max(op, std::max(rd, wr));
    ops_.add(1);
    busy_ns_.add(ns(d));
    sc_core::wait(d);
    return read_.ok() && write_.ok();
}

bool VectorEngine::op(const Instruction& ins) {
    sc_core::sc_time d = to_sc(cfg_.vector_op_time(ins.n_free, ins.inputs));
    bool ok = true;
    if (ins.psum_bytes > 0) {
        d = std::max(d, read_.run(psum_socket, false, 0, ins.partitions, 0, ins.psum_bytes));
        ok = ok && read_.ok();
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
