// Builds a platform from a PlatformConfig: `platform.chips` chips (each N tiles, the NoC and one
// HBM controller per stack, bound) and, with more than one, the NeuronLink cables between their
// link ports (docs/models/link.md). `tiles`, `noc` and `hbm` are chip 0's.
#pragma once

#include "models/flow/flow_network.h"
#include "models/link/chip_topology.h"
#include "models/link/neuron_link.h"
#include "platforms/chip.h"
#include "platforms/platform_config.h"

#include <memory>
#include <optional>
#include <string>
#include <systemc>
#include <vector>

namespace nctlm {

class Platform : public sc_core::sc_module {
public:
    Platform(sc_core::sc_module_name name, const PlatformConfig& cfg);

    const PlatformConfig config;
    const AddressMap address_map;

private:
    std::optional<ChipTopology> topology_;
    std::unique_ptr<Chip> single_;                      // a one-chip platform
    std::vector<std::unique_ptr<ChipModule>> modules_;  // or one module per chip
    std::vector<Chip*> chips_;

public:
    TileArray& tiles;
    Noc& noc;
    std::vector<std::unique_ptr<HbmController>>& hbm;
    // Cable c x ports/2 + k joins chip c's port 2k (x+, y+, ring +) to its neighbour's port 2k + 1.
    std::vector<std::unique_ptr<NeuronLink>> links;

    uint32_t chips() const { return uint32_t(chips_.size()); }
    Chip& chip(uint32_t c) { return *chips_.at(c); }
    const Chip& chip(uint32_t c) const { return *chips_.at(c); }
    // The cable that leaves chip `chip` by `port`, and whether the chip is its end a (it sends on
    // direction 0, a to b) or end b (direction 1).
    std::pair<NeuronLink*, bool> cable(uint32_t chip, uint32_t port) const;
    // The platform's NeuronLink wiring (null on a one-chip platform).
    const ChipTopology* chip_topology() const { return topology_ ? &*topology_ : nullptr; }

    // The stack attached to a tile's router, and an address inside it.
    uint32_t local_stack(uint32_t tile) const { return noc.topology().router_of_tile(tile); }
    uint32_t remote_stack(uint32_t tile) const { return (local_stack(tile) + 1) % config.hbm.stacks; }
    uint64_t stack_address(uint32_t stack, uint64_t offset) const { return address_map.stack_base(stack) + offset; }
    uint64_t stack_address(uint32_t chip, uint32_t stack, uint64_t offset) const {
        return address_map.stack_base(chip, stack) + offset;
    }
    // Descriptors still in flight (empty after a clean run): a deadlock report.
    std::vector<std::string> outstanding_report() const;
    // sim.timing: flow: the flow model and where its pseudo-channel table came from ("" otherwise).
    const FlowNetwork* flow() const { return flow_.get(); }
    const std::string& flow_table_origin() const { return flow_table_origin_; }
    // PE engines still waiting on semaphores at the end: a deadlock report.
    std::vector<std::string> blocked_engines() const;

private:
    std::vector<Chip*> build_chips();
    void wire_links();
    void enable_loosely_timed();  // sim.timing: lt (docs/performance.md)
    void enable_flow();           // sim.timing: flow (docs/performance.md)
    std::unique_ptr<DmaLtScheduler> lt_scheduler_;  // lt: every tile's DMA bursts in time order
    std::unique_ptr<FlowNetwork> flow_;              // flow: descriptors as flows
    std::string flow_table_origin_;
};

} // namespace nctlm
