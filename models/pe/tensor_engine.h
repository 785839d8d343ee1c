// The tensor engine: a tensor_rows x tensor_cols systolic array on its own clock (trn1: 128 x 128 at
// 2.8 GHz). Two units work at once, as in the array's double-buffered weight path: the operand
// fetch (SBUF -> staging, a TLM read of the operands) and the array itself (matmuls, whose cost
// follows engine_timing.h, accumulating into PSUM through a TLM write).
#pragma once

#include "models/common/stats.h"
#include "models/pe/instruction.h"
#include "models/pe/partition_ports.h"
#include "models/pe/pe_config.h"

#include <systemc>
#include <tlm_utils/simple_initiator_socket.h>

namespace nctlm {

class TensorEngine : public sc_core::sc_module {
public:
    tlm_utils::simple_initiator_socket<TensorEngine> sbuf_socket, psum_socket;
    TensorEngine(sc_core::sc_module_name name, const PeConfig& cfg);
    // Blocking, in the calling thread: returns when the instruction is done. False on a bad access.
    bool fetch(const Instruction& ins);
    bool matmul(const Instruction& ins);

private:
    PeConfig cfg_;
    PartitionAccess fetch_access_, psum_access_;
    Counter &matmuls_, &busy_ns_, &fetch_bytes_, &fetch_busy_ns_;
};

} // namespace nctlm
