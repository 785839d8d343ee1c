#include "sram_target.h"

#include <algorithm>

SramTarget::SramTarget(sc_core::sc_module_name name, const SramConfig& cfg)
    : sc_module(name), socket("socket"), cfg_(cfg), peq_(this, &SramTarget::respond) {
    socket.register_nb_transport_fw(this, &SramTarget::nb_transport_fw);
}

tlm::tlm_sync_enum SramTarget::nb_transport_fw(tlm::tlm_generic_payload& p, tlm::tlm_phase& phase,
                                               sc_core::sc_time& delay) {
    if (phase != tlm::BEGIN_REQ)
        return tlm::TLM_ACCEPTED;
    double now = (sc_core::sc_time_stamp() + delay).to_seconds() * 1e9;
    double start = std::max(now + cfg_.latency_ns, port_free_ns_);
    double end = start + p.get_data_length() / cfg_.bytes_per_ns;
    port_free_ns_ = end;
    ++bursts;
    bytes += p.get_data_length();
    p.set_response_status(tlm::TLM_OK_RESPONSE);
    // A read streams out during [start, end]; a write is acknowledged when written. A plain
    // generic payload (no TransferExt, e.g. from your own initiator) is answered just the same.
    double head = p.is_write() ? end : start;
    if (auto* x = p.get_extension<nctlm::TransferExt>()) {
        x->head_ns = head;
        x->tail_ns = end;
    }
    peq_.notify(p, tlm::BEGIN_RESP, sc_core::sc_time(head - sc_core::sc_time_stamp().to_seconds() * 1e9, sc_core::SC_NS));
    phase = tlm::END_REQ;
    return tlm::TLM_UPDATED;
}

void SramTarget::respond(tlm::tlm_generic_payload& p, const tlm::tlm_phase& phase) {
    tlm::tlm_phase ph = phase;
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    socket->nb_transport_bw(p, ph, delay);  // the NoC takes a response at once (END_RESP)
}
