// The one extension every burst carries through DMA → NoC → HBM and back. Allocated once per
// pooled payload; no allocation per transaction.
#pragma once

#include <cstdint>
#include <tlm>

namespace nctlm {

struct DmaDescriptor;

struct TransferExt : tlm::tlm_extension<TransferExt> {
    DmaDescriptor* descriptor = nullptr;  // owner, for completion
    uint64_t tag = 0;                     // any other initiator's own handle
    uint32_t src_tile = 0;                // initiating tile, routes the response
    uint32_t stack = 0, pseudo_channel = 0;
    double issue_ns = 0;                  // BEGIN_REQ left the DMA channel
    // Data in flight in the current direction: its first byte (head) and last byte (tail) times.
    // Links stream data cut-through, so a hop delays the head by its latency and the tail by
    // max(its own serialization, the incoming tail).
    double head_ns = 0, tail_ns = 0;
    // Attached by the NoC to a plain payload from a foreign initiator; removed before its response.
    bool attached_by_noc = false;
    // Trace flow id of the descriptor (0: untraced): every hop passes it as SpanArgs::flow so the
    // viewer links one burst's spans DMA -> NoC -> HBM -> back.
    uint64_t flow = 0;
    // No data: the data pointer is the initiator's shared scratch buffer (a valid pointer, IEEE
    // 1666-2011 14.11), which a functional target must neither store into memory nor fill.
    bool timing_only = false;
    // Loosely-timed mode (b_transport): when the callee accepted the request, i.e. when the
    // caller may send its next one (the time END_REQ would have carried). 0: at once.
    double accept_ns = 0;

    tlm_extension_base* clone() const override { return new TransferExt(*this); }
    void copy_from(const tlm_extension_base& other) override {
        *this = static_cast<const TransferExt&>(other);
    }
};

// Whether a functional target stores or fills the payload's data: not a timing-only burst's scratch
// buffer. A foreign initiator's plain payload (no extension) carries its data.
inline bool carries_data(const tlm::tlm_generic_payload& p) {
    const TransferExt* x = p.get_extension<TransferExt>();
    return p.get_data_ptr() && !(x && x->timing_only);
}

} // namespace nctlm
