// The flow mode's memory system (sim.timing: flow; docs/performance.md, "Flow mode"). Each DMA
// descriptor is one flow: after a latency paid up front (decode, the spread of its requests, the
// NoC route there and back, the pseudo-channel's own access latency, the completion) its bytes move
// at the rate weighted max-min fair sharing (FlowSolver) gives it over every resource it crosses:
// its tile's DMA data path, the NoC links of its routes (request headers or write data one way,
// read data or write acknowledgements the other) and the HBM pseudo-channels its bytes interleave
// over, each weighted by the bytes it puts there and by what that PC sustains for its request size
// and pattern (FlowTable, measured on the banked model). An all-bank refresh is an outage of every
// PC, tREFI apart. One SystemC method: it wakes only when a flow joins or finishes.
//
// Several chips (platform.chips > 1): every chip's DMA paths, NoC links and PCs are resources of
// one solver, and each NeuronLink direction (the cable leaving chip c by port p) is one more, of
// capacity link.bandwidth. A descriptor for another chip's memory crosses its own NoC to the link
// port of the first hop of ChipTopology::route, each hop's link direction, the NoC of every chip it
// passes (arrival port to the next port) and the far chip's NoC to the stack; its response comes
// back the same way on the opposite link directions. The links carry link.request_bytes per read
// request and per write acknowledgement (as the NoC carries its request_bytes), on the direction
// without the data as header usage (FlowSolver::set_header_usage: not starved by an older flow that
// fills that direction). Each hop's link.latency and its header's serialization are paid up front.
//
// Not modelled (the error against AT is measured, docs/performance.md): credits, queues and
// head-of-line blocking (back-pressure shows only as shared bandwidth), FR-FCFS reordering and
// write batching beyond what the table's sustained rates hold, the order of requests at a PC,
// NeuronLink credits (link.credits) and the links' own counters (bytes, busy time).
#pragma once

#include "models/common/stats.h"
#include "models/dma/descriptor_flows.h"
#include "models/dma/dma_config.h"
#include "models/flow/address_split.h"
#include "models/flow/chip_routes.h"
#include "models/flow/flow_solver.h"
#include "models/flow/flow_table.h"
#include "models/hbm/address_map.h"
#include "models/hbm/hbm_config.h"
#include "models/link/chip_topology.h"
#include "models/link/link_config.h"
#include "models/noc/noc_config.h"
#include "models/noc/topology.h"

#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <systemc>
#include <unordered_map>
#include <vector>

namespace nctlm {

class HbmController;

class FlowNetwork : public sc_core::sc_module, public DescriptorFlows {
public:
    SC_HAS_PROCESS(FlowNetwork);
    // What the flow model sees of each chip: its tiles' count comes from `topology`.
    struct ChipParts {
        std::vector<HbmController*> controllers;  // one per stack (their counters and functional memory)
        std::string noc_name;                     // the NoC's hierarchical name, for its burst counter
    };
    // `chips`: one entry per chip; `wiring`: the NeuronLink wiring (null on one chip, then `link`
    // is unused). `topology` is every chip's NoC (with its link ports when there are several).
    FlowNetwork(sc_core::sc_module_name name, const DmaConfig& dma, const NocConfig& noc, const HbmConfig& hbm,
                const AddressMap& map, const Topology& topology, std::vector<ChipParts> chips,
                const ChipTopology* wiring, const LinkConfig& link, flow::FlowTable table, flow::Sharing sharing);

    // Hands `engine` (a DMA engine of chip `chip`) its descriptors' flows.
    void attach(DmaEngine& engine, uint32_t chip);
    double start(DmaEngine& engine, DmaDescriptor& d, double start_ns) override;
    // Bytes (headers included) moved so far over the NeuronLink direction leaving `chip` by `port`.
    double neuron_link_bytes(uint32_t chip, uint32_t port) const {
        return solver_.resource_bytes(neuron_link_.at(chip * wiring_->ports() + port));
    }
    const flow::FlowTable& table() const { return table_; }

private:
    // A descriptor's bytes in one stack: a flow of its own (the stacks serve it independently, as
    // the pseudo-channels of one stack do not: they are coupled by the interleave).
    struct Part {
        uint32_t stack;  // chip x stacks + stack
        uint64_t bytes;
        uint64_t requests;
        uint32_t cls;
        double latency;  // from the descriptor's start to its first byte moving here, plus what follows its last
    };
    struct Shape {  // what a descriptor of this shape does; shared by every descriptor like it
        bool mapped = true;
        uint64_t unmapped_address = 0;
        uint32_t chip = 0;  // the chip whose memory it reaches
        double issue = 0;  // its requests on the engine's request socket
        uint64_t bursts = 0;
        std::vector<Part> parts;
        std::vector<uint32_t> nocs;  // the chips whose NoC its bursts cross (their burst counters)
    };
    struct InFlight {
        DmaEngine* engine = nullptr;
        DmaDescriptor* d = nullptr;
        const Shape* shape = nullptr;
        size_t parts_left = 0;
    };
    uint32_t intern_class(const std::map<uint32_t, double>& usage, const std::vector<uint32_t>& headers, uint32_t tile);

    void run();
    void schedule();
    const Shape& shape(uint32_t tile, const DmaDescriptor& d, bool sequential);
    Shape make_shape(uint32_t tile, const DmaDescriptor& d, bool sequential);
    void end_of_simulation() override;

    DmaConfig dma_;
    NocConfig noc_cfg_;
    HbmConfig hbm_;
    AddressMap map_;
    flow::AddressSplit split_;
    Topology topology_;
    std::vector<HbmController*> controllers_;  // chip x stacks + stack
    std::optional<ChipTopology> wiring_;
    LinkConfig link_cfg_;
    std::optional<flow::ChipRoutes> routes_;
    uint32_t tiles_per_chip_ = 0;
    flow::FlowTable table_;
    flow::FlowSolver solver_;
    // Resource ids: per chip x tile, per chip x NoC link, per chip x stack x PC, per NeuronLink
    // direction (chip x ports + port: the direction leaving that chip by that port).
    std::vector<uint32_t> pipe_, link_, pc_, neuron_link_;
    std::vector<double> link_bandwidth_;      // B/ns per NoC link (of one chip)
    double neuron_link_bandwidth_ = 0, neuron_link_latency_ = 0;  // B/ns, ns
    double hop_ns_, completion_ns_;
    bool refresh_outage_;                     // all-bank refresh as the solver's outage
    uint32_t refused_class_ = 0;
    std::unordered_map<flow::SplitKey, size_t, flow::SplitKeyHash> shape_index_;
    flow::SplitKey key_;  // scratch
    // Per tile: the key and shape of its last descriptor (a stream's next one is mostly alike: no hash).
    struct LastShape {
        flow::SplitKey key;
        size_t index = ~size_t(0);
    };
    std::vector<LastShape> last_shape_;
    std::deque<Shape> shapes_;  // stable addresses: flows in flight point at theirs
    std::unordered_map<std::string, uint32_t> class_index_;  // usage vector -> class
    std::vector<InFlight> in_flight_;
    std::vector<uint64_t> free_slots_;
    std::vector<uint64_t> last_end_;  // per tile: where its last descriptor ended (sequential?)
    std::vector<uint64_t> finished_;
    std::function<void(uint64_t, double)> collect_;  // into finished_ (built once, not per wake)
    sc_core::sc_event wake_;
    bool running_ = false;  // in run(): descriptors started from its completions schedule once, at its end
    Counter &descriptors_, &wakes_;
    std::vector<Counter*> noc_bursts_;  // per chip
};

} // namespace nctlm
