#include "models/flow/flow_solver.h"

#include <algorithm>
#include <cmath>
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
        if (r.capacity != before)
            dirty_ = true;  // every class crossing it may move at another rate
        else
            r.remaining = remaining;  // what the moving classes use of it stands
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
    return uint32_t(classes_.size() - 1);
}

void FlowSolver::set_header_usage(uint32_t cls, uint32_t resource) {
    if (cls >= classes_.size() || classes_[cls].active_index != ~size_t(0))
        throw std::invalid_argument("flow class: unknown or moving");
    Class& c = classes_[cls];
    for (uint32_t k = 0; k < c.usage.size(); ++k)
        if (c.usage[k].resource == resource) {
            if (std::find(c.headers.begin(), c.headers.end(), k) == c.headers.end()) {
                c.headers.push_back(k);
                c.held.push_back(0);
            }
            return;
        }
    throw std::invalid_argument("flow class: header usage of a resource it does not cross");
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
    active_head_.push_back(sharing_ == Sharing::InOrder ? c.queue.front().order : 0);
    if (sharing_ == Sharing::InOrder && !c.headers.empty())
        ++header_classes_;
    count_crossing(c, +1);
    if (sharing_ == Sharing::Fair)
        for (const Usage& u : c.usage)
            resources_[u.resource].classes.push_back(cls);
}

void FlowSolver::deactivate(uint32_t cls) {
    Class& c = classes_[cls];
    const uint32_t last = active_.back();
    active_[c.active_index] = last;
    active_head_[c.active_index] = active_head_.back();
    classes_[last].active_index = c.active_index;
    active_.pop_back();
    active_head_.pop_back();
    c.active_index = ~size_t(0);
    c.rate = 0;
    if (sharing_ == Sharing::InOrder && !c.headers.empty())
        --header_classes_;
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

void FlowSolver::allocate(Class& c) {
    settle(c);
    for (size_t h = 0; h < c.headers.size(); ++h) {  // its reservations are its own to take
        resources_[c.usage[c.headers[h]].resource].remaining += c.held[h];
        c.held[h] = 0;
    }
    // The resource that limited it last is full again more often than not (the older heads crossing
    // it fill it): then it gets nothing, as the scan below would find, without the scan.
    if (!c.usage.empty() && !(resources_[c.usage[c.bottleneck].resource].remaining > 0)) {
        c.rate = 0;
        return;
    }
    double rate = c.bound;
    for (size_t k = 0; k < c.usage.size(); ++k) {
        const Usage& u = c.usage[k];
        const double x = resources_[u.resource].remaining / u.weight;
        if (x < rate) {
            rate = x;
            c.bottleneck = uint32_t(k);
        }
        if (!(rate > 0))
            break;  // a full resource: the rest cannot give it more
    }
    if (!(rate > 1e-15)) {  // nothing (but rounding) left for it
        c.rate = 0;
        return;
    }
    c.rate = rate;
    next_finish_ = std::min(next_finish_, now_ + std::max(0.0, c.left) / rate);
    take(c, rate);
}

// Its usage at `rate` more off what its resources have left.
void FlowSolver::take(Class& c, double rate) {
    for (const Usage& u : c.usage) {
        Resource& r = resources_[u.resource];
        r.remaining -= u.weight * rate;
        if (r.remaining <= kShareTolerance * r.capacity)  // full but for rounding
            r.remaining = 0;
    }
}

// Class heads oldest first, each taking what the older ones left.
void FlowSolver::solve_in_order() {
    next_finish_ = kNever;
    for (Resource& r : resources_)  // all of them: fewer than the usage entries of the classes
        r.remaining = r.capacity;
    // Heads oldest first. Mostly in order already (a class that moved on went younger): an insertion
    // sort moves only those.
    for (size_t k = 1; k < active_.size(); ++k) {
        const uint32_t x = active_[k];
        const uint64_t key = active_head_[k];
        size_t j = k;
        for (; j > 0 && active_head_[j - 1] > key; --j) {
            active_[j] = active_[j - 1];
            active_head_[j] = active_head_[j - 1];
        }
        active_[j] = x;
        active_head_[j] = key;
    }
    if (header_classes_ > 0)
        reserve_headers();
    for (size_t k = 0; k < active_.size(); ++k) {
        Class& c = classes_[active_[k]];
        c.active_index = k;
        allocate(c);
    }
    if (header_classes_ > 0)
        top_up();
}

// Each moving class's header usage of a resource: capacity x its weight / the weights of every
// moving head crossing the resource (what weighted max-min would give it there if the resource
// limited every head crossing it), taken off the resource before the oldest-first pass.
void FlowSolver::reserve_headers() {
    std::vector<uint32_t> touched;
    for (uint32_t i : active_)
        for (uint32_t k : classes_[i].headers) {
            const uint32_t id = classes_[i].usage[k].resource;
            if (!resources_[id].touched) {
                resources_[id].touched = true;
                resources_[id].demand = 0;
                touched.push_back(id);
            }
        }
    for (uint32_t i : active_)
        for (const Usage& u : classes_[i].usage)
            if (resources_[u.resource].touched)
                resources_[u.resource].demand += u.weight;
    for (uint32_t i : active_) {
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
// goes to the heads, oldest first, each taking the minimum over its resources of what is left (a
// second in-order pass; without reservations it would give nothing).
void FlowSolver::top_up() {
    for (uint32_t i : active_) {
        Class& c = classes_[i];
        double extra = c.bound - c.rate;
        for (const Usage& u : c.usage) {
            extra = std::min(extra, resources_[u.resource].remaining / u.weight);
            if (!(extra > 0))
                break;
        }
        if (!(extra > kShareTolerance * c.rate + 1e-15))
            continue;
        c.rate += extra;
        next_finish_ = std::min(next_finish_, now_ + std::max(0.0, c.left) / c.rate);
        take(c, extra);
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
    c.rate = 0;
    activate(j.cls);
    if (dirty_)
        return;
    if (header_classes_ > 0) {  // header shares follow the heads crossing their resources: solve again
        dirty_ = true;
        return;
    }
    // The youngest moving flow takes what the others leave: no older flow changes.
    allocate(c);
}

void FlowSolver::collect_finishes(double t) {
    // In order, no head is due before the earliest finish at the current rates (next_finish_, a
    // bound kept by every allocation since the last solve): far enough before it, nothing to look at.
    // The margin is 100x due()'s tolerance and far above the rounding of the times compared.
    if (sharing_ == Sharing::InOrder && t + kFinishMargin + kFinishMarginRelative * std::abs(t) < next_finish_)
        return;
    for (size_t k = 0; k < active_.size();) {
        const uint32_t i = active_[k];
        Class& c = classes_[i];
        bool empty = false;
        if (sharing_ == Sharing::Fair) {
            while (!c.finishes.empty() && due(c)) {
                done_.push_back({c.finishes.top().tag, t});
                c.finishes.pop();
                --c.flows;
                ++events_;
                dirty_ = true;
            }
            empty = c.flows == 0;
        } else if (c.rate > 0 && due(c)) {
            settle(c);
            done_.push_back({c.queue.front().tag, t});
            c.queue.pop_front();
            ++events_;
            dirty_ = true;
            empty = c.queue.empty();
            if (!empty) {
                c.left = c.queue.front().bytes;
                active_head_[k] = c.queue.front().order;
            }
        }
        if (empty)
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
