#include "models/host/host.h"

namespace nctlm {

Host::Host(sc_core::sc_module_name name, const HostConfig& cfg)
    : sc_module(name), cfg_(cfg),
      staged_bytes_(stats().counter(std::string(this->name()) + ".staged_bytes", "B")),
      memcpy_ns_(stats().counter(std::string(this->name()) + ".memcpy_ns", "ns")) {}

void Host::staged(uint64_t bytes, double memcpy_ns) {
    if (memcpy_ns <= 0)
        return;
    staged_bytes_.add(double(bytes));
    memcpy_ns_.add(memcpy_ns);
}

} // namespace nctlm
