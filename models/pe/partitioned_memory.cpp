#include "models/pe/partitioned_memory.h"

#include "models/common/sim.h"

namespace nctlm {

PartitionedMemory::PartitionedMemory(sc_core::sc_module_name name, uint32_t partitions, uint64_t partition_bytes,
                                     Bandwidth partition_bandwidth, Duration latency)
    : sc_module(name), socket("socket"), read_ports_(partitions, 1e9 / partition_bandwidth.bytes_per_s),
      write_ports_(partitions, 1e9 / partition_bandwidth.bytes_per_s), partition_bytes_(partition_bytes),
      latency_ns_(latency.ns),
      bytes_read_(stats().counter(std::string(this->name()) + ".bytes_read", "B")),
      bytes_written_(stats().counter(std::string(this->name()) + ".bytes_written", "B")),
      accesses_(stats().counter(std::string(this->name()) + ".accesses", "")) {
    socket.register_b_transport(this, &PartitionedMemory::b_transport);
}

void PartitionedMemory::b_transport(int, tlm::tlm_generic_payload& p, sc_core::sc_time& delay) {
    PartitionExt* range = p.get_extension<PartitionExt>();
    uint32_t first = range ? range->first : 0, count = range ? range->count : 1;
    double per_partition = double(p.get_data_length()) / count;
    if (count == 0 || first + count > read_ports_.partitions() ||
        p.get_address() + per_partition > partition_bytes_) {
        p.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
        return;
    }
    double now = ns(sc_core::sc_time_stamp() + delay);
    double end =
        (p.is_write() ? write_ports_ : read_ports_).reserve(now + latency_ns_, first, count, per_partition);
    (p.is_write() ? bytes_written_ : bytes_read_).add(p.get_data_length());
    accesses_.add(1);
    delay = until(end);
    p.set_response_status(tlm::TLM_OK_RESPONSE);
}

void PartitionedMemory::end_of_simulation() {
    double elapsed = now_ns();
    stats().counter(std::string(name()) + ".read_utilization", "").value =
        elapsed > 0 ? read_ports_.busy_ns() / elapsed : 0;
    stats().counter(std::string(name()) + ".write_utilization", "").value =
        elapsed > 0 ? write_ports_.busy_ns() / elapsed : 0;
}

} // namespace nctlm
