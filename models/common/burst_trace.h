// Trace args of one burst at a hop (NoC link, HBM pseudo-channel), from its payload and, when it
// has one, its TransferExt: the flow id links the hop's span to the DMA's spans of the same
// descriptor (DMA channel -> NoC links -> HBM PC -> NoC links -> DMA data). A plain payload from
// a user's own initiator gets command, bytes and address only. Call it only with tracing on.
#pragma once

#include "models/common/trace.h"
#include "models/common/transfer.h"
#include "models/dma/dma_descriptor.h"  // the descriptor id (a plain struct: no link dependency)

#include <tlm>

namespace nctlm {

inline SpanArgs burst_span_args(const tlm::tlm_generic_payload& p, uint64_t bytes) {
    SpanArgs a;
    a.command = p.is_write() ? "write" : "read";
    a.bytes = bytes;
    a.address = p.get_address();
    a.burst = true;
    if (const TransferExt* x = p.get_extension<TransferExt>()) {
        if (x->descriptor)
            a.descriptor = x->descriptor->id;
        a.tile = int32_t(x->src_tile);
        a.flow = x->flow;
    }
    return a;
}

} // namespace nctlm
