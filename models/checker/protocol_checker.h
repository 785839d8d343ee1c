// ProtocolChecker: a pass-through module between an initiator socket and a target socket that
// checks the TLM-2.0 base protocol (IEEE 1666-2011) on every call crossing it, in both
// directions, and reports a violation as a simulation error (exit 3) naming the rule.
//
// Checked (clause numbers of IEEE 1666-2011):
//  - phase sequences (15.2.4, 15.2.5): BEGIN_REQ opens a transaction; END_REQ only after
//    BEGIN_REQ; BEGIN_RESP after BEGIN_REQ or END_REQ; END_RESP only after BEGIN_RESP; nothing
//    after the transaction completed (TLM_COMPLETED or END_RESP);
//  - request and response exclusion (15.2.6): one BEGIN_REQ without its END_REQ (or BEGIN_RESP)
//    per hop, one BEGIN_RESP without its END_RESP (or TLM_COMPLETED);
//  - data pointer never null (14.11), data length non-zero (14.12);
//  - attributes the target must not modify stay unchanged during a transaction (14.7):
//    command, address, data pointer, data length, byte enables, streaming width;
//  - memory management (14.5): nb_transport payloads have a memory manager and a reference
//    count > 0 on every call;
//  - b_transport (11.1.1): returns with a response status other than TLM_INCOMPLETE_RESPONSE.
// Adds no delay and changes nothing: timing with and without it is identical.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <systemc>
#include <tlm>

namespace nctlm {

class ProtocolChecker : public sc_core::sc_module,
                        public tlm::tlm_fw_transport_if<>,
                        public tlm::tlm_bw_transport_if<> {
public:
    tlm::tlm_target_socket<> target;        // bind the initiator's socket here
    tlm::tlm_initiator_socket<> initiator;  // and this to the target's socket

    explicit ProtocolChecker(sc_core::sc_module_name name);

    uint64_t calls() const { return calls_; }
    uint64_t violations() const { return violations_; }

    // Every checker built so far (process-wide): tests read their counts.
    static const std::vector<ProtocolChecker*>& all();

    // tlm_fw_transport_if
    tlm::tlm_sync_enum nb_transport_fw(tlm::tlm_generic_payload& p, tlm::tlm_phase& phase,
                                       sc_core::sc_time& delay) override;
    void b_transport(tlm::tlm_generic_payload& p, sc_core::sc_time& delay) override;
    bool get_direct_mem_ptr(tlm::tlm_generic_payload& p, tlm::tlm_dmi& dmi) override;
    unsigned int transport_dbg(tlm::tlm_generic_payload& p) override;
    // tlm_bw_transport_if
    tlm::tlm_sync_enum nb_transport_bw(tlm::tlm_generic_payload& p, tlm::tlm_phase& phase,
                                       sc_core::sc_time& delay) override;
    void invalidate_direct_mem_ptr(sc_dt::uint64 start, sc_dt::uint64 end) override;

private:
    enum class State { Req, ReqDone, Resp };
    struct Attributes {
        tlm::tlm_command command;
        uint64_t address;
        unsigned char* data;
        unsigned int length, streaming_width, byte_enable_length;
        unsigned char* byte_enables;
        bool operator==(const Attributes& o) const;
    };
    struct Txn {
        State state;
        Attributes attributes;
    };
    static Attributes attributes_of(const tlm::tlm_generic_payload& p);
    void violation(const tlm::tlm_generic_payload& p, const std::string& clause, const std::string& what);
    void check_common(const tlm::tlm_generic_payload& p, bool nb, const char* where);
    // The transaction moved to `phase` (sent in direction fw or bw); `status` is the return.
    void on_phase(tlm::tlm_generic_payload& p, const tlm::tlm_phase& phase, bool fw);
    void on_return(tlm::tlm_generic_payload& p, const tlm::tlm_phase& phase, tlm::tlm_sync_enum status, bool fw);
    void end(tlm::tlm_generic_payload& p);

    std::map<const tlm::tlm_generic_payload*, Txn> live_;
    const tlm::tlm_generic_payload* in_request_ = nullptr;   // request exclusion
    const tlm::tlm_generic_payload* in_response_ = nullptr;  // response exclusion
    uint64_t calls_ = 0, violations_ = 0;
};

} // namespace nctlm
