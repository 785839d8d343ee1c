// The vector engine (trn1: 1.12 GHz): here it evacuates PSUM accumulators into SBUF. A copy costs
// max(64, N) cycles plus the fixed access overhead (engine_timing.h); the PSUM read and SBUF write
// go through the memories' TLM targets and overlap the op, which retires when all are done.
#pragma once

#include "models/common/stats.h"
#include "models/pe/instruction.h"
#include "models/pe/partition_ports.h"
#include "models/pe/pe_config.h"

#include <systemc>
#include <tlm_utils/simple_initiator_socket.h>

namespace nctlm {

class VectorEngine : public sc_core::sc_module {
public:
    tlm_utils::simple_initiator_socket<VectorEngine> psum_socket, sbuf_socket;
    VectorEngine(sc_core::sc_module_name name, const PeConfig& cfg);
    bool copy(const Instruction& ins); // blocking in the calling thread
    // A generic op (max, add, multiply, reduce) over n_free elements with `inputs` operands: reads
    // psum_bytes from PSUM and sbuf_read_bytes from SBUF, writes `bytes` to SBUF.
    bool op(const Instruction& ins);

private:
    PeConfig cfg_;
    OperandAccesses operands_;
    Counter &ops_, &busy_ns_;
};

} // namespace nctlm
