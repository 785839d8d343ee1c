#include "models/hbm/hbm_controller.h"

#include "models/common/sim.h"
#include "models/common/trace.h"
#include "models/common/transfer.h"

#include <fmt/format.h>

namespace nctlm {

HbmController::HbmController(sc_core::sc_module_name name, const HbmConfig& cfg, const AddressMap& map,
                             uint32_t stack)
    : sc_module(name), socket("socket"), cfg_(cfg), map_(map), stack_(stack),
      resp_peq_(this, &HbmController::send_response),
      bytes_read_(stats().counter(std::string(this->name()) + ".bytes_read", "B")),
      bytes_written_(stats().counter(std::string(this->name()) + ".bytes_written", "B")),
      bursts_(stats().counter(std::string(this->name()) + ".bursts", "")) {
    socket.register_nb_transport_fw(this, &HbmController::nb_transport_fw);
    for (uint32_t i = 0; i < cfg.pseudo_channels; ++i) {
        std::string pc = fmt::format("pc{}", i);
        pcs_.push_back({BandwidthPipe(cfg.pc_bandwidth),
                        &stats().histogram(fmt::format("{}.{}.wait_ns", this->name(), pc), "ns"),
                        nctlm::trace().enabled() ? nctlm::trace().track(this->name(), pc) : -1});
    }
}

void HbmController::preload(uint64_t stack_offset, const unsigned char* data, uint64_t length) {
    memory_.write(stack_offset, data, length);
}

tlm::tlm_sync_enum HbmController::nb_transport_fw(tlm::tlm_generic_payload& p, tlm::tlm_phase& phase,
                                                  sc_core::sc_time& delay) {
    if (phase != tlm::BEGIN_REQ)  // END_RESP: the NoC always completes responses in the call
        return tlm::TLM_ACCEPTED;
    auto loc = map_.map(p.get_address());
    if (!loc || loc->stack != stack_) {
        p.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
        return tlm::TLM_COMPLETED;
    }
    PseudoChannel& pc = pcs_[loc->pseudo_channel];
    double arrival = ns(sc_core::sc_time_stamp() + delay);
    Occupancy occ = pc.pipe.reserve(arrival + cfg_.controller_latency.ns, p.get_data_length());
    pc.wait_ns->add(occ.start_ns - arrival - cfg_.controller_latency.ns);
    bursts_.add(1);
    bool write = p.is_write();
    (write ? bytes_written_ : bytes_read_).add(p.get_data_length());
    if (pc.track >= 0)
        nctlm::trace().span(pc.track, write ? "write" : "read", occ.start_ns, occ.end_ns);
    if (cfg_.functional && p.get_data_ptr()) {
        if (write)
            memory_.write(loc->offset, p.get_data_ptr(), p.get_data_length());
        else
            memory_.read(loc->offset, p.get_data_ptr(), p.get_data_length());
    }
    p.set_response_status(tlm::TLM_OK_RESPONSE);
    TransferExt& x = ext<TransferExt>(p);
    x.stack = loc->stack;
    x.pseudo_channel = loc->pseudo_channel;
    // A read's data streams out of the PC during [start, end]; a write is acknowledged when done.
    x.head_ns = write ? occ.end_ns : occ.start_ns;
    x.tail_ns = occ.end_ns;
    resp_peq_.notify(p, tlm::BEGIN_RESP, until(x.head_ns));
    phase = tlm::END_REQ;  // the controller queue accepts at once
    return tlm::TLM_UPDATED;
}

void HbmController::send_response(tlm::tlm_generic_payload& p, const tlm::tlm_phase& phase) {
    tlm::tlm_phase ph = phase;
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    socket->nb_transport_bw(p, ph, delay);  // the NoC takes the response at once (END_RESP)
}

void HbmController::end_of_simulation() {
    double busy = 0;
    for (size_t i = 0; i < pcs_.size(); ++i) {
        busy += pcs_[i].pipe.busy_ns();
        stats().counter(fmt::format("{}.pc{}.busy_ns", name(), i), "ns").value = pcs_[i].pipe.busy_ns();
    }
    double elapsed = now_ns();
    stats().counter(std::string(name()) + ".utilization", "").value =
        elapsed > 0 ? busy / (elapsed * pcs_.size()) : 0;
}

} // namespace nctlm
