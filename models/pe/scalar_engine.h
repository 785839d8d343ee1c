// The scalar (activation) engine (trn1: on the 1.12 GHz engine clock, 128 lanes, one per
// partition): exp, reciprocal, scale over N elements per partition, with an optional running sum
// in its reduce registers (NKI ISA activation). Cost: scalar_op_cycles (engine_timing.h); the PSUM
// or SBUF read and the SBUF write go through the memories' TLM targets and overlap the op.
#pragma once

#include "models/common/stats.h"
#include "models/pe/instruction.h"
#include "models/pe/partition_ports.h"
#include "models/pe/pe_config.h"

#include <systemc>
#include <tlm_utils/simple_initiator_socket.h>

namespace nctlm {

class ScalarEngine : public sc_core::sc_module {
public:
    tlm_utils::simple_initiator_socket<ScalarEngine> psum_socket, sbuf_socket;
    ScalarEngine(sc_core::sc_module_name name, const PeConfig& cfg);
    bool activation(const Instruction& ins); // blocking in the calling thread

private:
    PeConfig cfg_;
    OperandAccesses operands_;
    Counter &ops_, &busy_ns_;
};

} // namespace nctlm
