#include "models/host/host.h"

#include "models/host/transfer_schedule.h"

namespace nctlm {

Host::Host(sc_core::sc_module_name name, const HostConfig& cfg)
    : sc_module(name), cfg_(cfg),
      staged_bytes_(stats().counter(std::string(this->name()) + ".staged_bytes", "B")),
      memcpy_ns_(stats().counter(std::string(this->name()) + ".memcpy_ns", "ns")),
      pin_ns_(stats().counter(std::string(this->name()) + ".pin_ns", "ns")) {}

Bandwidth Host::tensor_copy_rate(uint64_t bytes) const {
    return copy_rate(2 * bytes, cfg_.llc_bytes, cfg_.memcpy_llc_bandwidth, cfg_.memcpy_bandwidth);
}

Duration Host::copy(uint64_t bytes) {
    Duration d = tensor_copy_rate(bytes).transfer(double(bytes));
    staged(bytes, d.ns);
    return d;
}

void Host::staged(uint64_t bytes, double memcpy_ns) {
    if (memcpy_ns <= 0)
        return;
    staged_bytes_.add(double(bytes));
    memcpy_ns_.add(memcpy_ns);
}

void Host::pinned(double pin_ns) {
    if (pin_ns > 0)
        pin_ns_.add(pin_ns);
}

} // namespace nctlm
