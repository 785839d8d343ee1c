#include "models/checker/protocol_checker.h"

#include "models/common/errors.h"

#include <fmt/format.h>

namespace nctlm {
namespace {
std::vector<ProtocolChecker*>& registry() {
    static std::vector<ProtocolChecker*> all;
    return all;
}
} // namespace

ProtocolChecker::ProtocolChecker(sc_core::sc_module_name name)
    : sc_module(name), target("target"), initiator("initiator") {
    target.bind(*this);
    initiator.bind(*this);
    registry().push_back(this);
}

const std::vector<ProtocolChecker*>& ProtocolChecker::all() { return registry(); }

bool ProtocolChecker::Attributes::operator==(const Attributes& o) const {
    return command == o.command && address == o.address && data == o.data && length == o.length &&
           streaming_width == o.streaming_width && byte_enable_length == o.byte_enable_length &&
           byte_enables == o.byte_enables;
}

ProtocolChecker::Attributes ProtocolChecker::attributes_of(const tlm::tlm_generic_payload& p) {
    return {p.get_command(),         p.get_address(),           p.get_data_ptr(),      p.get_data_length(),
            p.get_streaming_width(), p.get_byte_enable_length(), p.get_byte_enable_ptr()};
}

void ProtocolChecker::violation(const tlm::tlm_generic_payload& p, const std::string& clause, const std::string& what) {
    ++violations_;
    sim_error(fmt::format("{}: TLM-2.0 base protocol violation (IEEE 1666-2011 {}): {} [{} at 0x{:x}, {} B, t = {}]",
                          name(), clause, what, p.is_read() ? "read" : p.is_write() ? "write" : "ignore",
                          p.get_address(), p.get_data_length(), sc_core::sc_time_stamp().to_string()));
}

void ProtocolChecker::check_common(const tlm::tlm_generic_payload& p, bool nb, const char* where) {
    ++calls_;
    if (!p.get_data_ptr())
        violation(p, "14.11", std::string(where) + " with a null data pointer");
    if (p.get_data_length() == 0)
        violation(p, "14.12", std::string(where) + " with data length 0");
    if (nb && !p.has_mm())
        violation(p, "14.5", std::string(where) + ": a payload sent with nb_transport needs a memory manager");
    if (p.has_mm() && p.get_ref_count() <= 0)
        violation(p, "14.5", std::string(where) + " on a payload whose reference count is 0 (already released)");
    auto it = live_.find(&p);
    if (it != live_.end() && !(it->second.attributes == attributes_of(p)))
        violation(p, "14.7", std::string(where) +
                                 ": command, address, data pointer, length, byte enables or streaming width "
                                 "changed during the transaction");
}

void ProtocolChecker::end(tlm::tlm_generic_payload& p) {
    live_.erase(&p);
    if (in_request_ == &p)
        in_request_ = nullptr;
    if (in_response_ == &p)
        in_response_ = nullptr;
}

void ProtocolChecker::on_phase(tlm::tlm_generic_payload& p, const tlm::tlm_phase& phase, bool fw) {
    auto it = live_.find(&p);
    bool open = it != live_.end();
    const char* dir = fw ? "forward" : "backward";
    if (phase == tlm::BEGIN_REQ) {
        if (!fw)
            violation(p, "15.2.4", "BEGIN_REQ on the backward path");
        else if (open)
            violation(p, "15.2.5", "BEGIN_REQ for a transaction already open on this hop");
        else if (in_request_)
            violation(p, "15.2.6", "BEGIN_REQ while another request has not had END_REQ (request exclusion)");
        live_[&p] = Txn{State::Req, attributes_of(p)};
        in_request_ = &p;
    } else if (phase == tlm::END_REQ) {
        if (fw || !open || it->second.state != State::Req)
            violation(p, "15.2.5", fmt::format("END_REQ on the {} path without an open BEGIN_REQ", dir));
        else {
            it->second.state = State::ReqDone;
            in_request_ = nullptr;
        }
    } else if (phase == tlm::BEGIN_RESP) {
        if (fw || !open || it->second.state == State::Resp)
            violation(p, "15.2.5", fmt::format("BEGIN_RESP on the {} path without an open request", dir));
        else if (in_response_ && in_response_ != &p)
            violation(p, "15.2.6", "BEGIN_RESP while another response has not had END_RESP (response exclusion)");
        else {
            if (p.get_response_status() == tlm::TLM_INCOMPLETE_RESPONSE)
                violation(p, "14.17", "BEGIN_RESP with the response status still TLM_INCOMPLETE_RESPONSE");
            if (in_request_ == &p)  // BEGIN_RESP implies END_REQ
                in_request_ = nullptr;
            it->second.state = State::Resp;
            in_response_ = &p;
        }
    } else if (phase == tlm::END_RESP) {
        if (!fw || !open || it->second.state != State::Resp)
            violation(p, "15.2.5", fmt::format("END_RESP on the {} path without an open BEGIN_RESP", dir));
        end(p);
    } else {
        violation(p, "15.2.3", "a phase the base protocol does not define");
    }
}

void ProtocolChecker::on_return(tlm::tlm_generic_payload& p, const tlm::tlm_phase& phase, tlm::tlm_sync_enum status,
                                bool fw) {
    if (status == tlm::TLM_ACCEPTED)
        return;
    if (status == tlm::TLM_COMPLETED) {  // the transaction ends here, whatever its phase
        if (fw && live_.count(&p) && p.get_response_status() == tlm::TLM_INCOMPLETE_RESPONSE)
            violation(p, "15.2.7", "TLM_COMPLETED returned with the response status still incomplete");
        end(p);
        return;
    }
    // TLM_UPDATED: the callee moved the phase on, in the other direction.
    on_phase(p, phase, !fw);
}

tlm::tlm_sync_enum ProtocolChecker::nb_transport_fw(tlm::tlm_generic_payload& p, tlm::tlm_phase& phase,
                                                    sc_core::sc_time& delay) {
    check_common(p, true, "nb_transport_fw");
    on_phase(p, phase, true);
    tlm::tlm_sync_enum s = initiator->nb_transport_fw(p, phase, delay);
    on_return(p, phase, s, true);
    return s;
}

tlm::tlm_sync_enum ProtocolChecker::nb_transport_bw(tlm::tlm_generic_payload& p, tlm::tlm_phase& phase,
                                                    sc_core::sc_time& delay) {
    check_common(p, true, "nb_transport_bw");
    on_phase(p, phase, false);
    tlm::tlm_sync_enum s = target->nb_transport_bw(p, phase, delay);
    on_return(p, phase, s, false);
    return s;
}

void ProtocolChecker::b_transport(tlm::tlm_generic_payload& p, sc_core::sc_time& delay) {
    check_common(p, false, "b_transport");
    Attributes before = attributes_of(p);
    initiator->b_transport(p, delay);
    if (!(attributes_of(p) == before))
        violation(p, "14.7", "b_transport's target changed command, address, data pointer, length or byte enables");
    if (p.get_response_status() == tlm::TLM_INCOMPLETE_RESPONSE)
        violation(p, "14.17", "b_transport returned with the response status still TLM_INCOMPLETE_RESPONSE");
}

bool ProtocolChecker::get_direct_mem_ptr(tlm::tlm_generic_payload& p, tlm::tlm_dmi& dmi) {
    return initiator->get_direct_mem_ptr(p, dmi);
}

unsigned int ProtocolChecker::transport_dbg(tlm::tlm_generic_payload& p) { return initiator->transport_dbg(p); }

void ProtocolChecker::invalidate_direct_mem_ptr(sc_dt::uint64 start, sc_dt::uint64 end) {
    target->invalidate_direct_mem_ptr(start, end);
}

} // namespace nctlm
