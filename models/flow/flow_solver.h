// Flows sharing finite-rate resources, as a flow-level network model does (SimGrid's LMM solver,
// src/kernel/lmm/maxmin.cpp; Velho et al., "On the Validity of Flow-level TCP Network Models",
// ACM TOMACS 23(4), 2013). Pure C++, times in ns, amounts in bytes, rates in bytes per ns
// (numerically GB/s). Written for nctlm's flow mode (sim.timing: flow, docs/performance.md): a DMA
// descriptor is a flow over its DMA data path, NoC links and HBM pseudo-channels.
//
// A flow belongs to a *class*: the resources it crosses and how many bytes of each it consumes per
// byte it moves (its usage vector). Rates come from progressive filling, recomputed only when the
// set of moving flows changes (a join, a finish) or a capacity does (an outage), and lazily:
// several changes at one time cost one solve. Two ways to share a resource:
//
//   fair:     weighted max-min with equal weights (processor sharing): every flow of a bottleneck
//             moves at the same rate. Flows of one class always get the same rate, so the solver
//             fills classes with their multiplicities; each class keeps a virtual progress V (bytes
//             per flow since it began) and a flow that joined at V = v0 with b bytes is done at
//             V = v0 + b: finishes come from one heap per class, a rate change touches no flow.
//   in_order: the limit of weighted max-min as the weight of an older flow grows without bound:
//             the oldest flow takes what it can use of every resource it crosses, the next what is
//             left, and so on. A resource that serves requests in arrival order (an HBM
//             pseudo-channel serves one request at a time; the NoC forwards in order) behaves so,
//             and closed-loop traffic then keeps its completions staggered, where fair sharing
//             finishes equal flows together and leaves the resource idle during their next
//             latency (measured: 33 % of bandwidth on trn2 DMA traffic, docs/performance.md).
//             Within a class only the oldest flow can move (the resource that limits it limits
//             every flow of the class), so a class is a FIFO and a solve visits class heads only.
//             Header usage (set_header_usage) is the exception: a class that crosses a resource
//             with headers only (read requests, write acknowledgements on a NeuronLink direction
//             whose data another flow fills) is first given its weighted fair share there, because
//             a wire that books bursts in arrival order (LinkTiming) delays a header by about a
//             burst; what it leaves unused goes back to the heads, oldest first.
//
//             Resources that no allocation fills ("slack": what the moving classes take of them, all
//             together, stays below their capacity) cannot limit anyone, so only the others (the
//             "binding" set, grown when a slack resource fills) couple classes: classes linked by
//             binding resources form a component, and a change re-solves only its component. The
//             result is the whole solve's (test FlowSolverInOrder.ComponentSolveEqualsAWholeSolve...).
//             A resource marked as header usage is binding from the mark on (every head crossing
//             it is in one component, which reserves and tops up over its own heads) and never
//             turns slack again.
//
// A flow joins at a time given when it is added (its latency phase before that moves nothing).
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <limits>
#include <queue>
#include <vector>

namespace nctlm::flow {

constexpr double kNever = std::numeric_limits<double>::infinity();

struct Usage {
    uint32_t resource;
    double weight;  // bytes of the resource per byte of the flow (> 0)
};

enum class Sharing { Fair, InOrder };

class FlowSolver {
public:
    explicit FlowSolver(Sharing sharing = Sharing::InOrder) : sharing_(sharing) {}
    uint32_t add_resource(double capacity);  // bytes per ns; >= 0
    // The resource gives `fraction[n - 1]` of its capacity while n classes cross it at once (the
    // last entry beyond): an HBM pseudo-channel shared by several streams reopens rows (FlowTable).
    void set_sharing_fraction(uint32_t resource, std::vector<double> fraction);
    // Classes of one group count once there (one tile's descriptors are one stream of addresses).
    void set_class_group(uint32_t cls, uint32_t group);
    // A class: the usage vector of its flows, and a bound on each flow's rate (kNever: none).
    uint32_t add_class(std::vector<Usage> usage, double rate_bound = kNever);
    // In order: the class's usage of `resource` (one of its usage vector's) is headers only; before
    // the oldest-first pass it is reserved the class's weighted fair share of the resource (capacity
    // x its weight / the weights of every moving head crossing it). Fair sharing: no effect.
    void set_header_usage(uint32_t cls, uint32_t resource);
    // The resources are unavailable (capacity 0) during [first + k period, first + k period + length),
    // k = 0, 1, ... (an all-bank refresh blocks every pseudo-channel of a stack).
    void add_outage(std::vector<uint32_t> resources, double first, double period, double length);

    // A flow of `bytes` in class `cls` that starts moving at `join` (not before the solver's time);
    // `tag` is returned when it is done. Zero bytes: done at `join`.
    void add_flow(uint32_t cls, double bytes, double join, uint64_t tag);

    // Processes, in time order, every join, finish and outage change at or before `t`; calls
    // done(tag, finish_time) for each flow done, in finish order. Then the solver stands at `t`.
    void advance(double t, const std::function<void(uint64_t, double)>& done);
    // The time of the next join, finish or outage change (kNever if nothing is pending).
    double next_event();
    double now() const { return now_; }

    // The current rate of each moving flow of the class (in_order: of its oldest flow; 0: none).
    double class_rate(uint32_t cls);
    size_t class_flows(uint32_t cls) const;  // joined and not done
    double resource_capacity(uint32_t r) const { return resources_[r].capacity; }
    double resource_bytes(uint32_t r) const;  // moved through it up to the last rate change (statistics)
    size_t classes() const { return classes_.size(); }
    uint64_t solves() const { return solves_; }
    uint64_t events() const { return events_; }  // joins + finishes + outage changes processed
    size_t components() const { return components_.size() - free_components_.size(); }  // in_order
    uint64_t promotions() const { return promotions_; }  // in_order: resources found binding
    uint64_t demotions() const { return demotions_; }    // in_order: binding resources found slack again

private:
    struct Finish {
        double v;  // fair: virtual progress at which it is done
        uint64_t tag;
        bool operator>(const Finish& o) const { return v > o.v || (v == o.v && tag > o.tag); }
    };
    struct Queued {  // in_order: a flow waiting behind its class's oldest
        uint64_t tag, order;
        double bytes;
    };
    struct Class {
        std::vector<Usage> usage;
        double bound = kNever;
        double rate = 0;  // per moving flow
        double moved = 0; // bytes its flows moved, all together
        bool fixed = false;
        size_t active_index = ~size_t(0);
        uint32_t group = ~0u;  // ~0: a group of its own
        uint32_t bottleneck = 0;  // in_order: the binding entry that limited it last (looked at first)
        std::vector<uint32_t> headers;  // in_order: usage entries that are headers only
        std::vector<double> held;       // in_order: what its component's solve reserved on each of them
        // in_order: its usage entries on binding and on slack resources; its component; its sort
        // key there (its head's order, or kAppended | arrival for a head that joined since the
        // component's last solve and took what the others left)
        std::vector<Usage> binding, slack;
        uint32_t component = 0;
        uint64_t key = 0;
        // fair
        uint32_t flows = 0;
        double v = 0;
        std::priority_queue<Finish, std::vector<Finish>, std::greater<Finish>> finishes;
        // in_order: queue.front() moves: `left` bytes to go at time `since` (lazily advanced)
        std::deque<Queued> queue;
        double left = 0, since = 0;
    };
    struct Resource {
        double capacity = 0, nominal = 0;
        double remaining = 0, demand = 0;  // solve(): capacity left, weighted flows not yet fixed
        bool down = false;              // in an outage
        std::vector<double> fraction;   // of nominal, by active classes crossing it (empty: 1)
        uint32_t crossing = 0;          // groups of active classes crossing it
        std::vector<uint32_t> by_group; // active classes crossing it, by group
        std::vector<uint32_t> classes;  // fair: active classes crossing it
        bool touched = false;
        // in_order: binding (in a component) or slack (then `taken` is what moving classes take of it)
        bool binding = false;
        bool headers = false;  // some class's header usage: binding for good
        uint32_t component = 0;
        double taken = 0;
    };
    // in_order: classes coupled by binding resources (and those resources); the active ones in the
    // order of their last allocation
    struct Component {
        std::vector<uint32_t> resources, active;
        double next_finish = kNever;  // the earliest finish since its last solve
        uint64_t youngest = 0;        // the largest head order allocated in it
        uint32_t header_classes = 0;  // active classes with header usage
        bool dirty = false, unsorted = false, live = true;
    };
    struct Join {
        double t;
        uint32_t cls;
        double bytes;
        uint64_t tag;
        uint64_t order;
        bool operator>(const Join& o) const { return t > o.t || (t == o.t && order > o.order); }
    };
    struct Outage {
        std::vector<uint32_t> resources;
        double first, period, length;
        bool down = false;
        double next;  // next change
    };

    bool moving() const { return !active_.empty(); }
    void progress_to(double t);
    void activate(uint32_t cls);
    void deactivate(uint32_t cls);
    void join(const Join& j);
    void collect_finishes(double t);
    void update_outage(Outage& o, double t);
    void set_capacity(Resource& r);
    void count_crossing(const Class& c, int delta);
    void solve();
    void solve_fair();
    void solve_in_order();
    void allocate(Class& c);  // in_order: what older flows left of its resources
    void take(Class& c, double rate);  // in_order: its usage at `rate` more off its binding resources
    void reserve_headers(const Component& K);  // in_order: header usage's weighted fair shares, before allocate()
    void top_up(Component& K);  // in_order: what reservations left unused, to the heads oldest first
    void set_rate(Class& c, double rate);  // in_order: keeps the slack resources' `taken`
    void check_slack(uint32_t r);          // in_order: a slack resource that fills becomes binding
    void mark_dirty(uint32_t component);
    uint32_t new_component();  // in_order: an empty one (a freed id first)
    void solve_component(uint32_t k, bool sort);
    void place_class(uint32_t cls);          // in_order: its usage split and component
    void merge_components(uint32_t into, uint32_t from);
    void promote_pending();                  // makes the resources found filling binding
    void make_binding(uint32_t r);           // a slack resource: its classes' components merged
    void replay_all();                       // every component again in its current order
    void demote_slack();                     // binding resources far from full turn slack again
    void settle(Class& c);    // in_order: its head's bytes moved up to now
    bool due(const Class& c) const;  // its first flow is done
    double class_finish(const Class& c) const;

    Sharing sharing_;
    std::vector<Resource> resources_;
    std::vector<Class> classes_;
    std::vector<uint32_t> active_;  // classes with moving flows
    std::priority_queue<Join, std::vector<Join>, std::greater<Join>> joins_;
    std::vector<Outage> outages_;
    std::vector<std::pair<uint64_t, double>> done_;  // advance(): finished in this step
    double now_ = 0;
    uint64_t order_ = 0, solves_ = 0, events_ = 0;
    bool dirty_ = false;
    double next_finish_ = kNever;  // in_order: the earliest finish since the last solve
    std::vector<Component> components_;
    std::vector<uint32_t> free_components_, dirty_components_, unsorted_components_, promote_;
    std::vector<uint32_t> appended_;  // heads that joined since the last solve
    uint64_t arrivals_ = 0, promotions_ = 0, demotions_ = 0;
    uint32_t header_classes_ = 0;  // in_order: moving classes with header usage
};

} // namespace nctlm::flow
