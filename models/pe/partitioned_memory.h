// A partitioned on-chip memory of the PE (SBUF, PSUM). A TLM-2.0 target (blocking transport): an
// access waits for its partitions' read (or write) ports, pays the access latency and moves
// bytes/partition at the per-partition rate.
#pragma once

#include "models/common/stats.h"
#include "models/pe/partition_ports.h"
#include "models/common/units.h"

#include <systemc>
#include <tlm>
#include <tlm_utils/multi_passthrough_target_socket.h>

namespace nctlm {

class PartitionedMemory : public sc_core::sc_module {
public:
    tlm_utils::multi_passthrough_target_socket<PartitionedMemory> socket;
    PartitionedMemory(sc_core::sc_module_name name, uint32_t partitions, uint64_t partition_bytes,
                      Bandwidth partition_bandwidth, Duration latency);
    uint64_t partition_bytes() const { return partition_bytes_; }

private:
    void b_transport(int id, tlm::tlm_generic_payload& p, sc_core::sc_time& delay);
    void end_of_simulation() override;
    PartitionPorts read_ports_, write_ports_; // one read and one write port per partition
    uint64_t partition_bytes_;
    double latency_ns_;
    Counter &bytes_read_, &bytes_written_, &accesses_;
};

} // namespace nctlm
