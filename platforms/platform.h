// Builds a chip from a PlatformConfig: N tiles, the NoC and one HBM controller per stack, bound.
#pragma once

#include "models/core/tile_array.h"
#include "models/flow/flow_network.h"
#include "models/hbm/address_map.h"
#include "models/hbm/hbm_controller.h"
#include "models/noc/noc.h"
#include "platforms/platform_config.h"

#include <memory>
#include <string>
#include <systemc>
#include <vector>

namespace nctlm {

class Platform : public sc_core::sc_module {
public:
    Platform(sc_core::sc_module_name name, const PlatformConfig& cfg);

    const PlatformConfig config;
    const AddressMap address_map;
    TileArray tiles;
    Noc noc;
    std::vector<std::unique_ptr<HbmController>> hbm;

    // The stack attached to a tile's router, and an address inside it.
    uint32_t local_stack(uint32_t tile) const { return noc.topology().router_of_tile(tile); }
    uint32_t remote_stack(uint32_t tile) const { return (local_stack(tile) + 1) % config.hbm.stacks; }
    uint64_t stack_address(uint32_t stack, uint64_t offset) const { return address_map.stack_base(stack) + offset; }
    // Descriptors still in flight (empty after a clean run): a deadlock report.
    std::vector<std::string> outstanding_report() const;
    // sim.timing: flow: the flow model and where its pseudo-channel table came from ("" otherwise).
    const FlowNetwork* flow() const { return flow_.get(); }
    const std::string& flow_table_origin() const { return flow_table_origin_; }
    // PE engines still waiting on semaphores at the end: a deadlock report.
    std::vector<std::string> blocked_engines() const;

private:
    void enable_loosely_timed();  // sim.timing: lt (docs/performance.md)
    void enable_flow();           // sim.timing: flow (docs/performance.md)
    std::unique_ptr<DmaLtScheduler> lt_scheduler_;  // lt: every tile's DMA bursts in time order
    std::unique_ptr<FlowNetwork> flow_;              // flow: descriptors as flows
    std::string flow_table_origin_;
};

} // namespace nctlm
