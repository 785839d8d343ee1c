#include "models/flow/flow_solver.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace nctlm::flow {

namespace {
// Two shares this close are one bottleneck level (rounding of the subtractions in solve()).
constexpr double kShareTolerance = 1e-12;
// A flow is done when what it has left is this close to nothing: relative to its target, or what
// it moves in this time (ns; far below the kernel's 1 fs grid).
constexpr double kDoneTolerance = 1e-12, kTimeTolerance = 1e-8;
// collect_finishes(): how far before the earliest finish nothing is due (ns, plus a relative part
// for the rounding of large times).
constexpr double kFinishMargin = 1e-6, kFinishMarginRelative = 1e-12;
// in_order: a slack resource whose moving classes take this close to its capacity becomes binding
// (far above the rounding of the sum kept and of the whole solve's subtractions, so a resource left
// slack leaves every class more than the class's rate: it limits no one).
constexpr double kSlackMargin = 1e-7;
// in_order: the sort key of a head that joined since its component's last solve (after the others).
constexpr uint64_t kAppended = uint64_t(1) << 63;
// in_order: every this many solves, a binding resource that keeps at least this fraction of its
// capacity turns slack (it limits no one then; the fraction keeps a resource that fills now and
// then from changing sides at every look, since each change of side costs a whole solve).
constexpr uint64_t kDemoteEvery = 256;
constexpr double kDemoteLeft = 0.5;
} // namespace

uint32_t FlowSolver::add_resource(double capacity) {
    if (!(capacity >= 0))
        throw std::invalid_argument("flow resource: capacity must be >= 0");
    Resource r;
    r.capacity = r.nominal = r.remaining = capacity;
    resources_.push_back(std::move(r));
    return uint32_t(resources_.size() - 1);
}

void FlowSolver::set_sharing_fraction(uint32_t resource, std::vector<double> fraction) {
    if (resource >= resources_.size())
        throw std::invalid_argument("flow resource: unknown");
    for (double f : fraction)
        if (!(f > 0 && f <= 1))
            throw std::invalid_argument("flow resource: a sharing fraction must be in (0, 1]");
    resources_[resource].fraction = std::move(fraction);
    set_capacity(resources_[resource]);
}

void FlowSolver::set_class_group(uint32_t cls, uint32_t group) {
    if (cls >= classes_.size() || classes_[cls].active_index != ~size_t(0))
        throw std::invalid_argument("flow class: unknown or moving");
    classes_[cls].group = group;
}

void FlowSolver::set_capacity(Resource& r) {
    double f = 1;
    if (!r.fraction.empty() && r.crossing > 0)
        f = r.fraction[std::min<size_t>(r.crossing, r.fraction.size()) - 1];
    r.capacity = r.remaining = r.down ? 0 : r.nominal * f;
}

// A class starts or stops crossing its resources: those with a sharing fraction change capacity.
void FlowSolver::count_crossing(const Class& c, int delta) {
    for (const Usage& u : c.usage) {
        Resource& r = resources_[u.resource];
        if (r.fraction.empty())
            continue;
        const double before = r.capacity;
        if (c.group == ~0u) {
            r.crossing = uint32_t(int(r.crossing) + delta);
        } else {
            if (r.by_group.size() <= c.group)
                r.by_group.resize(c.group + 1, 0);
            uint32_t& n = r.by_group[c.group];
            if ((delta > 0 && n++ == 0) || (delta < 0 && --n == 0))
                r.crossing = uint32_t(int(r.crossing) + delta);
        }
        const double remaining = r.remaining;
        set_capacity(r);
        if (r.capacity != before) {
            dirty_ = true;  // every class crossing it may move at another rate
            if (sharing_ == Sharing::InOrder) {
                if (r.binding)
                    mark_dirty(r.component);
                else
                    check_slack(u.resource);
            }
        } else {
            r.remaining = remaining;  // what the moving classes use of it stands
        }
    }
}

uint32_t FlowSolver::add_class(std::vector<Usage> usage, double rate_bound) {
    for (const Usage& u : usage)
        if (u.resource >= resources_.size() || !(u.weight > 0))
            throw std::invalid_argument("flow class: usage names an unknown resource or a weight <= 0");
    if (usage.empty() && !(rate_bound < kNever))
        throw std::invalid_argument("flow class: neither a resource nor a rate bound limits it");
    Class c;
    c.usage = std::move(usage);
    c.bound = rate_bound;
    classes_.push_back(std::move(c));
    const uint32_t id = uint32_t(classes_.size() - 1);
    if (sharing_ == Sharing::InOrder)
        place_class(id);
    return id;
}

void FlowSolver::set_header_usage(uint32_t cls, uint32_t resource) {
    if (cls >= classes_.size() || classes_[cls].active_index != ~size_t(0))
        throw std::invalid_argument("flow class: unknown or moving");
    Class& c = classes_[cls];
    const auto u = std::find_if(c.usage.begin(), c.usage.end(), [&](const Usage& x) { return x.resource == resource; });
    if (u == c.usage.end())
        throw std::invalid_argument("flow class: header usage of a resource it does not cross");
    const uint32_t k = uint32_t(u - c.usage.begin());
    if (std::find(c.headers.begin(), c.headers.end(), k) == c.headers.end()) {
        c.headers.push_back(k);
        c.held.push_back(0);
    }
    if (sharing_ != Sharing::InOrder)
        return;
    // Binding from now on: every head crossing it is in the component that reserves its shares.
    Resource& r = resources_[resource];
    r.headers = true;
    if (!r.binding) {
        make_binding(resource);
        if (!components_[r.component].active.empty())
            mark_dirty(r.component);
    }
}

// Its usage entries split into binding and slack; its component: the one of its binding resources
// (merging those it links), or one of its own.
void FlowSolver::place_class(uint32_t cls) {
    Class& c = classes_[cls];
    c.binding.clear();
    c.slack.clear();
    c.bottleneck = 0;
    uint32_t k = ~0u;
    for (const Usage& u : c.usage) {
        const Resource& r = resources_[u.resource];
        if (!r.binding) {
            c.slack.push_back(u);
            continue;
        }
        c.binding.push_back(u);
        if (k == ~0u)
            k = r.component;
        else if (r.component != k)
            merge_components(k, r.component);
    }
    c.component = k == ~0u ? new_component() : k;
}

// One component from two (a class or a resource turned binding links them): the active heads keep
// their order (sorted heads by head order, then those appended since, in arrival order).
void FlowSolver::merge_components(uint32_t into, uint32_t from) {
    if (into == from)
        return;
    Component& a = components_[into];
    Component& b = components_[from];
    for (uint32_t r : b.resources)
        resources_[r].component = into;
    a.resources.insert(a.resources.end(), b.resources.begin(), b.resources.end());
    for (Class& c : classes_)
        if (c.component == from)
            c.component = into;
    a.active.insert(a.active.end(), b.active.begin(), b.active.end());
    std::stable_sort(a.active.begin(), a.active.end(),
                     [&](uint32_t x, uint32_t y) { return classes_[x].key < classes_[y].key; });
    a.next_finish = std::min(a.next_finish, b.next_finish);
    a.header_classes += b.header_classes;
    a.youngest = std::max(a.youngest, b.youngest);
    const bool dirty = b.dirty;
    components_[from] = Component{};
    components_[from].live = false;
    free_components_.push_back(from);
    if (dirty)
        mark_dirty(into);
    if (!components_[into].unsorted) {  // their heads interleave: the next solve sorts them (as the whole one does)
        components_[into].unsorted = true;
        unsorted_components_.push_back(into);
    }
}

uint32_t FlowSolver::new_component() {
    if (free_components_.empty()) {
        components_.emplace_back();
        return uint32_t(components_.size() - 1);
    }
    const uint32_t k = free_components_.back();
    free_components_.pop_back();
    components_[k] = Component{};
    return k;
}

void FlowSolver::mark_dirty(uint32_t k) {
    dirty_ = true;
    Component& K = components_[k];
    if (!K.dirty) {
        K.dirty = true;
        dirty_components_.push_back(k);
    }
}

// A slack resource's moving classes take (nearly) all of it: it may limit one of them from now on.
void FlowSolver::check_slack(uint32_t r) {
    const Resource& res = resources_[r];
    if (!res.binding && res.taken > 0 && res.taken >= res.capacity * (1 - kSlackMargin) &&
        std::find(promote_.begin(), promote_.end(), r) == promote_.end())
        promote_.push_back(r);
}

void FlowSolver::set_rate(Class& c, double rate) {
    if (rate != c.rate)
        for (const Usage& u : c.slack) {
            resources_[u.resource].taken += u.weight * (rate - c.rate);
            if (rate > c.rate)
                check_slack(u.resource);
        }
    c.rate = rate;
}

// The resources found filling become binding: every class crossing one joins its component. The
// caller solves the merged components again.
void FlowSolver::promote_pending() {
    for (size_t q = 0; q < promote_.size(); ++q) {
        const uint32_t r = promote_[q];
        Resource& res = resources_[r];
        if (res.binding)
            continue;
        ++promotions_;
        make_binding(r);
    }
    promote_.clear();
}

// A slack resource turns binding: every class crossing it joins its component.
void FlowSolver::make_binding(uint32_t r) {
    Resource& res = resources_[r];
    res.binding = true;
    res.taken = 0;
    const uint32_t k = new_component();
    components_[k].resources.push_back(r);
    res.component = k;
    for (uint32_t i = 0; i < classes_.size(); ++i) {
        Class& c = classes_[i];
        if (std::none_of(c.usage.begin(), c.usage.end(), [&](const Usage& u) { return u.resource == r; }))
            continue;
        const uint32_t old = c.component;
        c.binding.clear();
        c.slack.clear();
        c.bottleneck = 0;
        for (const Usage& u : c.usage)
            (resources_[u.resource].binding ? c.binding : c.slack).push_back(u);
        merge_components(k, old);
    }
}

void FlowSolver::add_outage(std::vector<uint32_t> resources, double first, double period, double length) {
    if (!(period > 0) || !(length >= 0) || length >= period)
        throw std::invalid_argument("flow outage: needs 0 <= length < period");
    if (length == 0)
        return;
    Outage o;
    o.resources = std::move(resources);
    o.first = first;
    o.period = period;
    o.length = length;
    o.next = first;
    outages_.push_back(std::move(o));
}

void FlowSolver::add_flow(uint32_t cls, double bytes, double join, uint64_t tag) {
    if (cls >= classes_.size())
        throw std::invalid_argument("flow: unknown class");
    joins_.push({std::max(join, now_), cls, std::max(0.0, bytes), tag, order_++});
}

double FlowSolver::resource_bytes(uint32_t r) const {
    double bytes = 0;
    for (const Class& c : classes_)
        for (const Usage& u : c.usage)
            if (u.resource == r)
                bytes += c.moved * u.weight;
    return bytes;
}

size_t FlowSolver::class_flows(uint32_t cls) const {
    const Class& c = classes_[cls];
    return sharing_ == Sharing::Fair ? c.flows : c.queue.size();
}

void FlowSolver::activate(uint32_t cls) {
    Class& c = classes_[cls];
    c.active_index = active_.size();
    active_.push_back(cls);
    if (sharing_ == Sharing::InOrder) {
        components_[c.component].active.push_back(cls);
        if (!c.headers.empty()) {
            ++components_[c.component].header_classes;
            ++header_classes_;
        }
    }
    count_crossing(c, +1);
    if (sharing_ == Sharing::Fair)
        for (const Usage& u : c.usage)
            resources_[u.resource].classes.push_back(cls);
}

void FlowSolver::deactivate(uint32_t cls) {
    Class& c = classes_[cls];
    const uint32_t last = active_.back();
    active_[c.active_index] = last;
    classes_[last].active_index = c.active_index;
    active_.pop_back();
    c.active_index = ~size_t(0);
    if (sharing_ == Sharing::InOrder) {
        set_rate(c, 0);
        auto& v = components_[c.component].active;
        v.erase(std::find(v.begin(), v.end(), cls));
        if (!c.headers.empty()) {
            --components_[c.component].header_classes;
            --header_classes_;
        }
    } else {
        c.rate = 0;
    }
    count_crossing(c, -1);
    if (sharing_ == Sharing::Fair)
        for (const Usage& u : c.usage) {
            auto& v = resources_[u.resource].classes;
            v.erase(std::find(v.begin(), v.end(), cls));
        }
}

void FlowSolver::progress_to(double t) {
    const double dt = t - now_;
    if (dt > 0 && sharing_ == Sharing::Fair)
        for (uint32_t i : active_) {
            Class& c = classes_[i];
            if (c.rate <= 0)
                continue;
            const double moved = c.rate * dt;
            c.v += moved;
            c.moved += moved * double(c.flows);
        }
    now_ = std::max(now_, t);
}

void FlowSolver::solve() {
    ++solves_;
    dirty_ = false;
    if (sharing_ == Sharing::InOrder)
        solve_in_order();
    else
        solve_fair();
}

// In order: a class's head moves at a constant rate between solves; bring it to now first.
void FlowSolver::settle(Class& c) {
    if (c.rate > 0 && now_ > c.since) {
        const double moved = c.rate * (now_ - c.since);
        c.left -= moved;
        c.moved += moved;
    }
    c.since = now_;
}

// Over its binding resources only: a slack one leaves it more than that (check_slack).
void FlowSolver::allocate(Class& c) {
    settle(c);
    for (size_t h = 0; h < c.headers.size(); ++h) {  // its reservations are its own to take
        resources_[c.usage[c.headers[h]].resource].remaining += c.held[h];
        c.held[h] = 0;
    }
    // The resource that limited it last is full again more often than not (the older heads crossing
    // it fill it): then it gets nothing, as the scan below would find, without the scan.
    if (!c.binding.empty() && !(resources_[c.binding[c.bottleneck].resource].remaining > 0)) {
        set_rate(c, 0);
        return;
    }
    double rate = c.bound;
    for (size_t k = 0; k < c.binding.size(); ++k) {
        const Usage& u = c.binding[k];
        const double x = resources_[u.resource].remaining / u.weight;
        if (x < rate) {
            rate = x;
            c.bottleneck = uint32_t(k);
        }
        if (!(rate > 0))
            break;  // a full resource: the rest cannot give it more
    }
    if (!(rate < kNever)) {  // no binding resource limits it: its tightest slack one will
        const Usage* tightest = &c.slack.front();
        for (const Usage& u : c.slack)
            if (resources_[u.resource].capacity / u.weight < resources_[tightest->resource].capacity / tightest->weight)
                tightest = &u;
        if (std::find(promote_.begin(), promote_.end(), tightest->resource) == promote_.end())
            promote_.push_back(tightest->resource);
        set_rate(c, 0);
        return;
    }
    if (!(rate > 1e-15)) {  // nothing (but rounding) left for it
        set_rate(c, 0);
        return;
    }
    set_rate(c, rate);
    Component& k = components_[c.component];
    k.next_finish = std::min(k.next_finish, now_ + std::max(0.0, c.left) / rate);
    next_finish_ = std::min(next_finish_, k.next_finish);
    take(c, rate);
}

// Its usage at `rate` more off what its binding resources have left.
void FlowSolver::take(Class& c, double rate) {
    for (const Usage& u : c.binding) {
        Resource& r = resources_[u.resource];
        r.remaining -= u.weight * rate;
        if (r.remaining <= kShareTolerance * r.capacity)  // full but for rounding
            r.remaining = 0;
    }
}

// A component's heads, each taking what the older ones left of its binding resources: oldest first
// (sort), or in the order they were allocated (a replay after a resource turned binding).
void FlowSolver::solve_component(uint32_t k, bool sort) {
    Component& K = components_[k];
    for (uint32_t r : K.resources)
        resources_[r].remaining = resources_[r].capacity;
    if (sort)
        for (uint32_t i : K.active)
            classes_[i].key = classes_[i].queue.front().order;
    // Mostly in order already (a class that moved on went younger): an insertion sort moves only those.
    for (size_t a = 1; a < K.active.size(); ++a) {
        const uint32_t x = K.active[a];
        const uint64_t key = classes_[x].key;
        size_t j = a;
        for (; j > 0 && classes_[K.active[j - 1]].key > key; --j)
            K.active[j] = K.active[j - 1];
        K.active[j] = x;
    }
    K.next_finish = kNever;
    if (K.header_classes > 0)
        reserve_headers(K);
    for (uint32_t i : K.active)
        allocate(classes_[i]);
    if (K.header_classes > 0)
        top_up(K);
    if (sort) {
        K.youngest = K.active.empty() ? 0 : classes_[K.active.back()].key;
        K.dirty = K.unsorted = false;
    }
}

// Each moving class's header usage of a resource: capacity x its weight / the weights of every
// moving head crossing the resource (what weighted max-min would give it there if the resource
// limited every head crossing it), taken off the resource before the oldest-first pass. A header
// resource is binding: every head crossing it is in the component.
void FlowSolver::reserve_headers(const Component& K) {
    std::vector<uint32_t> touched;
    for (uint32_t i : K.active)
        for (uint32_t k : classes_[i].headers) {
            const uint32_t id = classes_[i].usage[k].resource;
            if (!resources_[id].touched) {
                resources_[id].touched = true;
                resources_[id].demand = 0;
                touched.push_back(id);
            }
        }
    for (uint32_t i : K.active)
        for (const Usage& u : classes_[i].binding)
            if (resources_[u.resource].touched)
                resources_[u.resource].demand += u.weight;
    for (uint32_t i : K.active) {
        Class& c = classes_[i];
        for (size_t h = 0; h < c.headers.size(); ++h) {
            const Usage& u = c.usage[c.headers[h]];
            Resource& r = resources_[u.resource];
            c.held[h] = r.capacity * u.weight / r.demand;
            r.remaining = std::max(0.0, r.remaining - c.held[h]);
        }
    }
    for (uint32_t id : touched)
        resources_[id].touched = false;
}

// After the oldest-first pass: what a header reservation left unused (its class limited elsewhere)
// goes to the component's heads, oldest first, each taking the minimum over its binding resources
// of what is left (a slack one it fills turns binding: set_rate, the solve again).
void FlowSolver::top_up(Component& K) {
    for (uint32_t i : K.active) {
        Class& c = classes_[i];
        if (c.binding.empty())
            continue;
        double extra = c.bound - c.rate;
        for (const Usage& u : c.binding) {
            extra = std::min(extra, resources_[u.resource].remaining / u.weight);
            if (!(extra > 0))
                break;
        }
        if (!(extra > kShareTolerance * c.rate + 1e-15))
            continue;
        set_rate(c, c.rate + extra);
        K.next_finish = std::min(K.next_finish, now_ + std::max(0.0, c.left) / c.rate);
        next_finish_ = std::min(next_finish_, K.next_finish);
        take(c, extra);
    }
}

void FlowSolver::replay_all() {
    do {
        promote_pending();
        for (uint32_t k = 0; k < components_.size(); ++k)
            if (components_[k].live)
                solve_component(k, false);
    } while (!promote_.empty());
    next_finish_ = kNever;
    for (const Component& K : components_)
        next_finish_ = std::min(next_finish_, K.next_finish);
}

// Class heads oldest first, each taking what the older ones left: only the components something
// changed in, and those a head joined out of order since (the whole solve would sort it in).
void FlowSolver::solve_in_order() {
    while (true) {
        if (!promote_.empty()) {  // the components merged: the whole solve
            promote_pending();
            for (uint32_t k = 0; k < components_.size(); ++k)
                if (components_[k].live)
                    mark_dirty(k);
        }
        for (size_t q = 0; q < dirty_components_.size(); ++q)
            if (components_[dirty_components_[q]].live && components_[dirty_components_[q]].dirty)
                solve_component(dirty_components_[q], true);
        for (size_t q = 0; q < unsorted_components_.size(); ++q)
            if (components_[unsorted_components_[q]].live && components_[unsorted_components_[q]].unsorted)
                solve_component(unsorted_components_[q], true);
        dirty_components_.clear();
        unsorted_components_.clear();
        if (promote_.empty())
            break;
    }
    dirty_ = false;
    // The whole solve sorts every head in: one that joined since, youngest in its component, stays
    // where it is, with its head's order as its key (the order a later merge of components keeps).
    for (uint32_t i : appended_)
        if (!classes_[i].queue.empty() && classes_[i].key >= kAppended)
            classes_[i].key = classes_[i].queue.front().order;
    appended_.clear();
    if (solves_ % kDemoteEvery == 0)
        demote_slack();
    next_finish_ = kNever;
    for (const Component& K : components_)
        next_finish_ = std::min(next_finish_, K.next_finish);
}

// Right after a solve (every component is solved): a binding resource that keeps kDemoteLeft of its
// capacity limited no head (a head it limited would have left it full), so it can turn slack; the
// components are then found again from the binding resources left, each head keeping its share.
void FlowSolver::demote_slack() {
    bool any = false;
    for (Resource& r : resources_)
        if (r.binding && !r.headers && r.remaining >= kDemoteLeft * r.capacity && r.capacity > 0) {
            r.binding = false;
            r.taken = r.capacity - r.remaining;
            ++demotions_;
            any = true;
        }
    if (!any)
        return;
    std::vector<uint32_t> parent(resources_.size());
    std::iota(parent.begin(), parent.end(), 0u);
    auto find = [&](uint32_t x) {
        while (parent[x] != x)
            x = parent[x] = parent[parent[x]];
        return x;
    };
    for (Class& c : classes_) {
        c.binding.clear();
        c.slack.clear();
        c.bottleneck = 0;
        for (const Usage& u : c.usage)
            (resources_[u.resource].binding ? c.binding : c.slack).push_back(u);
        for (size_t k = 1; k < c.binding.size(); ++k)
            parent[find(c.binding[k].resource)] = find(c.binding[0].resource);
    }
    components_.clear();
    free_components_.clear();
    std::vector<uint32_t> of_root(resources_.size(), ~0u);
    for (uint32_t r = 0; r < resources_.size(); ++r) {
        if (!resources_[r].binding)
            continue;
        uint32_t& k = of_root[find(r)];
        if (k == ~0u) {
            k = uint32_t(components_.size());
            components_.emplace_back();
        }
        components_[k].resources.push_back(r);
        resources_[r].component = k;
    }
    for (Class& c : classes_) {
        if (c.binding.empty()) {
            c.component = uint32_t(components_.size());
            components_.emplace_back();
        } else {
            c.component = resources_[c.binding[0].resource].component;
        }
    }
    for (uint32_t i : active_) {
        const Class& c = classes_[i];
        Component& K = components_[c.component];
        K.active.push_back(i);
        if (!c.headers.empty())
            ++K.header_classes;
        if (c.rate > 0)
            K.next_finish = std::min(K.next_finish, c.since + std::max(0.0, c.left) / c.rate);
    }
    for (Component& K : components_) {
        std::sort(K.active.begin(), K.active.end(), [&](uint32_t x, uint32_t y) { return classes_[x].key < classes_[y].key; });
        K.youngest = K.active.empty() ? 0 : classes_[K.active.back()].key;
    }
}

// Progressive filling: raise every unfixed class's rate together until a resource is full (or a
// class reaches its bound); fix the classes crossing it at that share; repeat with what is left.
// Weighted by usage: a class consumes flows x weight of a resource per byte/ns of its rate.
void FlowSolver::solve_fair() {
    std::vector<uint32_t> touched;
    for (uint32_t i : active_) {
        Class& c = classes_[i];
        c.fixed = false;
        c.rate = 0;
        for (const Usage& u : c.usage) {
            Resource& r = resources_[u.resource];
            if (!r.touched) {
                r.touched = true;
                r.remaining = r.capacity;
                r.demand = 0;
                touched.push_back(u.resource);
            }
            r.demand += double(c.flows) * u.weight;
        }
    }
    size_t unfixed = active_.size();
    auto fix = [&](uint32_t i, double rate) {
        Class& c = classes_[i];
        c.fixed = true;
        c.rate = rate;
        --unfixed;
        for (const Usage& u : c.usage) {
            Resource& r = resources_[u.resource];
            r.remaining = std::max(0.0, r.remaining - double(c.flows) * u.weight * rate);
            r.demand -= double(c.flows) * u.weight;
        }
    };
    auto open = [&](const Resource& res) {
        for (uint32_t i : res.classes)
            if (!classes_[i].fixed)
                return true;
        return false;
    };
    while (unfixed > 0) {
        double share = kNever;
        for (uint32_t r : touched)
            if (resources_[r].demand > 0 && open(resources_[r]))
                share = std::min(share, resources_[r].remaining / resources_[r].demand);
        for (uint32_t i : active_)
            if (!classes_[i].fixed)
                share = std::min(share, classes_[i].bound);
        if (!(share < kNever))
            throw std::logic_error("flow solver: a class is limited by nothing");
        const double level = share * (1 + kShareTolerance) + 1e-300;
        for (uint32_t r : touched) {
            const Resource& res = resources_[r];
            if (res.demand > 0 && res.remaining / res.demand <= level)
                for (uint32_t i : res.classes)
                    if (!classes_[i].fixed)
                        fix(i, share);
        }
        for (uint32_t i : active_)
            if (!classes_[i].fixed && classes_[i].bound <= level)
                fix(i, std::min(share, classes_[i].bound));
    }
    for (uint32_t r : touched)
        resources_[r].touched = false;
}

bool FlowSolver::due(const Class& c) const {
    if (sharing_ == Sharing::InOrder)
        return c.left - c.rate * (now_ - c.since) <= c.rate * kTimeTolerance;
    const double left = c.finishes.top().v - c.v;
    return left <= std::max(kDoneTolerance * std::abs(c.finishes.top().v), c.rate * kTimeTolerance);
}

double FlowSolver::class_finish(const Class& c) const {
    if (due(c))
        return now_;
    return c.rate > 0 ? now_ + (c.finishes.top().v - c.v) / c.rate : kNever;
}

double FlowSolver::next_event() {
    if (dirty_)
        solve();
    double t = joins_.empty() ? kNever : joins_.top().t;
    if (moving())  // an outage changes nothing while nothing moves
        for (const Outage& o : outages_)
            t = std::min(t, o.next);
    if (sharing_ == Sharing::InOrder)
        return std::min(t, std::max(now_, next_finish_));
    for (uint32_t i : active_)
        t = std::min(t, class_finish(classes_[i]));
    return t;
}

double FlowSolver::class_rate(uint32_t cls) {
    if (dirty_)
        solve();
    return class_flows(cls) ? classes_[cls].rate : 0;
}

// The outage's state at t and its next change after t, from its phase (it may have been idle for
// many periods while nothing moved).
void FlowSolver::update_outage(Outage& o, double t) {
    bool down = false;
    if (t >= o.first) {
        const double k = std::floor((t - o.first) / o.period), start = o.first + k * o.period;
        down = t < start + o.length;
        o.next = down ? start + o.length : start + o.period;
    } else {
        o.next = o.first;
    }
    if (down != o.down) {
        o.down = down;
        for (uint32_t r : o.resources) {
            resources_[r].down = down;
            set_capacity(resources_[r]);
            if (sharing_ == Sharing::InOrder) {
                if (resources_[r].binding)
                    mark_dirty(resources_[r].component);
                else
                    check_slack(r);
            }
        }
        ++events_;
        dirty_ = true;
    }
}

void FlowSolver::join(const Join& j) {
    ++events_;
    if (j.bytes <= 0) {
        done_.push_back({j.tag, now_});
        return;
    }
    Class& c = classes_[j.cls];
    if (sharing_ == Sharing::Fair) {
        if (c.flows++ == 0)
            activate(j.cls);
        c.finishes.push({c.v + j.bytes, j.tag});
        dirty_ = true;
        return;
    }
    c.queue.push_back({j.tag, j.order, j.bytes});
    if (c.queue.size() > 1)
        return;  // behind the class's oldest: nothing moves differently
    c.left = j.bytes;
    c.since = now_;
    activate(j.cls);
    // Header shares follow the heads crossing their resources: the component's whole solve. While
    // a class with header usage moves anywhere, a join sorts its head in at once (as the whole
    // solve that header usage asks for would): a component it would join out of order is solved.
    Component& k = components_[c.component];
    if (dirty_ || k.header_classes > 0 || (header_classes_ > 0 && (k.unsorted || j.order < k.youngest))) {
        mark_dirty(c.component);
        return;
    }
    // The youngest moving flow takes what the others leave: no older flow changes. Out of order in
    // its component, the next solve sorts it in.
    c.key = kAppended | arrivals_++;
    appended_.push_back(j.cls);
    if (j.order < k.youngest) {
        if (!k.unsorted) {
            k.unsorted = true;
            unsorted_components_.push_back(c.component);
        }
    } else {
        k.youngest = j.order;
    }
    allocate(c);
    if (promote_.empty())
        return;
    if (header_classes_ > 0)  // it may link a component with header usage: the whole solve sorts it in
        dirty_ = true;
    else  // a slack resource filled: as if it had been binding all along
        replay_all();
}

void FlowSolver::collect_finishes(double t) {
    // In order, no head is due before the earliest finish at the current rates (next_finish_, a
    // bound kept by every allocation since the last solve): far enough before it, nothing to look at.
    // The margin is 100x due()'s tolerance and far above the rounding of the times compared.
    const double margin = kFinishMargin + kFinishMarginRelative * std::abs(t);
    if (sharing_ == Sharing::InOrder) {
        if (t + margin < next_finish_)
            return;
        for (uint32_t k = 0; k < components_.size(); ++k) {
            if (!components_[k].live || t + margin < components_[k].next_finish)
                continue;
            for (size_t a = 0; a < components_[k].active.size();) {
                const uint32_t i = components_[k].active[a];
                Class& c = classes_[i];
                if (c.rate > 0 && due(c)) {
                    settle(c);
                    done_.push_back({c.queue.front().tag, t});
                    c.queue.pop_front();
                    ++events_;
                    mark_dirty(k);
                    if (c.queue.empty()) {
                        deactivate(i);  // out of the component's list: look at index a again
                        continue;
                    }
                    c.left = c.queue.front().bytes;
                }
                ++a;
            }
        }
        return;
    }
    for (size_t k = 0; k < active_.size();) {
        const uint32_t i = active_[k];
        Class& c = classes_[i];
        while (!c.finishes.empty() && due(c)) {
            done_.push_back({c.finishes.top().tag, t});
            c.finishes.pop();
            --c.flows;
            ++events_;
            dirty_ = true;
        }
        if (c.flows == 0)
            deactivate(i);  // the last active class moved here: look at index k again
        else
            ++k;
    }
}

void FlowSolver::advance(double t, const std::function<void(uint64_t, double)>& done) {
    done_.clear();
    while (true) {
        const double te = next_event();
        if (te > t)
            break;
        progress_to(te);
        while (!joins_.empty() && joins_.top().t <= te) {
            const Join j = joins_.top();
            joins_.pop();
            join(j);
        }
        for (Outage& o : outages_)
            if (o.next <= te)
                update_outage(o, te);
        collect_finishes(te);
    }
    progress_to(t);
    for (const auto& [tag, at] : done_)
        done(tag, at);
}

} // namespace nctlm::flow
