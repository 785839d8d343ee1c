// A user-written memory target: an on-package SRAM with a fixed access latency and one port of
// fixed bandwidth, bound to the NoC in place of an HBM stack. It honours the NoC's stack-socket
// contract (docs/library.md): answer BEGIN_REQ with END_REQ at once, send BEGIN_RESP when the
// first byte of the response leaves, and report the data's head/tail times in TransferExt.
#pragma once

#include "models/common/transfer.h"   // TransferExt: the extension every burst carries

#include <systemc>
#include <tlm>
#include <tlm_utils/peq_with_cb_and_phase.h>
#include <tlm_utils/simple_target_socket.h>

struct SramConfig {
    double latency_ns = 20;        // access latency
    double bytes_per_ns = 1024;    // port bandwidth: 1 TB/s (one wide port)
};

class SramTarget : public sc_core::sc_module {
public:
    tlm_utils::simple_target_socket<SramTarget> socket;
    SramTarget(sc_core::sc_module_name name, const SramConfig& cfg);
    uint64_t bursts = 0, bytes = 0;

private:
    tlm::tlm_sync_enum nb_transport_fw(tlm::tlm_generic_payload& p, tlm::tlm_phase& phase, sc_core::sc_time& delay);
    void respond(tlm::tlm_generic_payload& p, const tlm::tlm_phase& phase);
    SramConfig cfg_;
    double port_free_ns_ = 0;  // the one port serializes bursts
    tlm_utils::peq_with_cb_and_phase<SramTarget> peq_;
};
