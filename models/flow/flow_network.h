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
// Not modelled (the error against AT is measured, docs/performance.md): credits, queues and
// head-of-line blocking (back-pressure shows only as shared bandwidth), FR-FCFS reordering and
// write batching beyond what the table's sustained rates hold, the order of requests at a PC.
#pragma once

#include "models/common/stats.h"
#include "models/dma/descriptor_flows.h"
#include "models/dma/dma_config.h"
#include "models/flow/address_split.h"
#include "models/flow/flow_solver.h"
#include "models/flow/flow_table.h"
#include "models/hbm/address_map.h"
#include "models/hbm/hbm_config.h"
#include "models/noc/noc_config.h"
#include "models/noc/topology.h"

#include <deque>
#include <functional>
#include <map>
#include <string>
#include <systemc>
#include <unordered_map>
#include <vector>

namespace nctlm {

class HbmController;

class FlowNetwork : public sc_core::sc_module, public DescriptorFlows {
public:
    SC_HAS_PROCESS(FlowNetwork);
    // `controllers`: one per stack (their counters and functional memory); `noc_name`: the NoC's
    // hierarchical name, for its burst counter.
    FlowNetwork(sc_core::sc_module_name name, const DmaConfig& dma, const NocConfig& noc, const HbmConfig& hbm,
                const AddressMap& map, const Topology& topology, std::vector<HbmController*> controllers,
                const std::string& noc_name, flow::FlowTable table, flow::Sharing sharing);

    double start(DmaEngine& engine, DmaDescriptor& d, double start_ns) override;
    const flow::FlowTable& table() const { return table_; }

private:
    // A descriptor's bytes in one stack: a flow of its own (the stacks serve it independently, as
    // the pseudo-channels of one stack do not: they are coupled by the interleave).
    struct Part {
        uint32_t stack;
        uint64_t bytes;
        uint64_t requests;
        uint32_t cls;
        double latency;  // from the descriptor's start to its first byte moving here, plus what follows its last
    };
    struct Shape {  // what a descriptor of this shape does; shared by every descriptor like it
        bool mapped = true;
        uint64_t unmapped_address = 0;
        double issue = 0;  // its requests on the engine's request socket
        uint64_t bursts = 0;
        std::vector<Part> parts;
    };
    struct InFlight {
        DmaEngine* engine = nullptr;
        DmaDescriptor* d = nullptr;
        const Shape* shape = nullptr;
        size_t parts_left = 0;
    };
    uint32_t intern_class(const std::map<uint32_t, double>& usage, uint32_t tile);

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
    std::vector<HbmController*> controllers_;
    flow::FlowTable table_;
    flow::FlowSolver solver_;
    std::vector<uint32_t> pipe_, link_, pc_;  // resource ids: per tile, per NoC link, per stack x PC
    std::vector<double> link_bandwidth_;      // B/ns per NoC link
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
    Counter &descriptors_, &wakes_, &noc_bursts_;
};

} // namespace nctlm
