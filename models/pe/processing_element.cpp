#include "models/pe/processing_element.h"

#include "models/checker/bind.h"
#include "models/common/errors.h"
#include "models/common/sim.h"
#include "models/common/trace.h"

#include "models/pe/dma_runs.h"

#include <fmt/format.h>
#include <functional>

namespace nctlm {


ProcessingElement::ProcessingElement(sc_core::sc_module_name name, DmaEngine& dma, const PeConfig& cfg)
    : sc_module(name), sbuf("sbuf", cfg), psum("psum", cfg), tensor("tensor", cfg), vector("vector", cfg), scalar("scalar", cfg),
      dma_(dma), cfg_(cfg),
      instructions_(stats().counter(std::string(this->name()) + ".instructions", "")),
      dma_instructions_(stats().counter(std::string(this->name()) + ".dma_instructions", "")),
      dma_bytes_(stats().counter(std::string(this->name()) + ".dma_bytes", "B")),
      dma_issue_busy_ns_(stats().counter(std::string(this->name()) + ".dma_issue_busy_ns", "ns")) {
    nctlm::bind(tensor.sbuf_socket, sbuf.socket, "tensor_sbuf");
    nctlm::bind(tensor.psum_socket, psum.socket, "tensor_psum");
    nctlm::bind(vector.psum_socket, psum.socket, "vector_psum");
    nctlm::bind(vector.sbuf_socket, sbuf.socket, "vector_sbuf");
    nctlm::bind(scalar.psum_socket, psum.socket, "scalar_psum");
    nctlm::bind(scalar.sbuf_socket, sbuf.socket, "scalar_sbuf");
    for (int u = 0; u < kUnits; ++u) {
        // The sync unit's track only once a barrier runs (most programs have none).
        tracks_[u] = !nctlm::trace().enabled() ? -1 : Unit(u) == Unit::Sync ? -2
                                                      : nctlm::trace().track(this->name(), unit_name(Unit(u)));
        sc_core::sc_spawn_options opts;
        sc_core::sc_spawn([this, u] { unit_thread(u); }, (std::string("unit_") + unit_name(Unit(u))).c_str(),
                          &opts);
    }
}

PeRunRecord ProcessingElement::execute(const Program& program) {
    program_ = &program;
    for (auto& q : queues_)
        q.clear();
    if (!program.source)
        for (size_t i = 0; i < program.instructions.size(); ++i)
            queues_[int(program.instructions[i].unit)].push_back(i);
    sems_.assign(program.semaphores, 0);
    early_.assign(program.semaphores, {});
    pending_ = program.size();
    record_ = PeRunRecord{};
    record_.submit_ns = now_ns();
    // Launch: doorbell, instruction fetch, semaphore reset and DMA ring set-up before the sequencer
    // runs (a profile's kernel span starts after it).
    if (program.launched && cfg_.launch_overhead.ns > 0)
        sc_core::wait(to_sc(cfg_.launch_overhead));
    record_.launch_ns = now_ns();
    record_.tiles.resize(program.tiles);
    // Fill: the sequencer fetches and decodes the first instructions before anything issues.
    sc_core::wait(to_sc(cfg_.pipeline_fill));
    for (auto& e : start_)
        e.notify(sc_core::SC_ZERO_TIME);
    while (pending_ > 0)
        sc_core::wait(all_done_);
    record_.done_ns = now_ns();
    // Tail: the last completion reaches the kernel's done semaphore.
    sc_core::wait(to_sc(cfg_.pipeline_tail));
    record_.end_ns = now_ns();
    program_ = nullptr;
    return record_;
}

void ProcessingElement::wait_for(const Instruction& ins, uint64_t index) {
    Waiting& me = waiting_[int(ins.unit)];
    for (const SemWait& w : ins.waits) {
        if (w.sem >= sems_.size())
            throw std::invalid_argument(fmt::format("{}: semaphore {} does not exist", name(), w.sem));
        me = {&ins, index, w};
        while (sems_[w.sem] < w.value)
            sc_core::wait(sem_changed_);
    }
    me.ins = nullptr;
}

std::vector<std::string> ProcessingElement::blocked_report() const {
    std::vector<std::string> lines;
    if (!program_ || pending_ == 0)
        return lines;
    for (int u = 0; u < kUnits; ++u) {
        const Waiting& w = waiting_[u];
        if (!w.ins)
            continue;
        std::string sem = program_->semaphore_name ? program_->semaphore_name(w.wait.sem)
                                                   : fmt::format("semaphore {}", w.wait.sem);
        lines.push_back(fmt::format("{}: the {} engine waits at instruction {} ({}{}) for {} to reach {} (it is at {})",
                                    name(), unit_name(Unit(u)), w.index,
                                    w.ins->label ? w.ins->label : stage_name(w.ins->stage),
                                    w.ins->source ? std::string(" at ") + w.ins->source : std::string(), sem,
                                    w.wait.value, sems_.at(w.wait.sem)));
    }
    if (lines.empty())
        lines.push_back(fmt::format("{}: {} instruction(s) unfinished", name(), pending_));
    return lines;
}

void ProcessingElement::complete(const Instruction& ins, int64_t index, double start, double end, uint64_t flow) {
    if (ins.tile < record_.tiles.size())
        record_.tiles[ins.tile][int(ins.stage)].cover(start, end);
    int& track = tracks_[int(ins.unit)];
    if (track == -2)
        track = nctlm::trace().track(name(), unit_name(ins.unit));
    if (track >= 0) {
        SpanArgs a;
        bool dma = ins.op == Op::DmaRead || ins.op == Op::DmaWrite;
        a.command = ins.label ? ins.label : stage_name(ins.stage);
        if (dma) {
            a.bytes = ins.bytes;
            a.address = ins.address;
            a.queue = int32_t(ins.queue);
            a.bandwidth = false;  // the DMA engine's data spans carry the bandwidth
        }
        a.tile = int32_t(ins.tile);
        if (index >= 0)
            a.instruction = index;
        a.flow = flow;
        a.source = ins.source;
        std::copy(std::begin(ins.shape), std::end(ins.shape), std::begin(a.shape));
        nctlm::trace().span(track, ins.label ? ins.label : stage_name(ins.stage), start, end, a);
    }
    instructions_.add(1);
    if (ins.signal >= 0)
        signal(uint32_t(ins.signal), ins.signal_ordinal);
    if (--pending_ == 0)
        all_done_.notify(sc_core::SC_ZERO_TIME);
}

void ProcessingElement::signal(uint32_t sem, uint64_t ordinal) {
    uint64_t& value = sems_.at(sem);
    if (ordinal == 0 || ordinal == value + 1) {
        ++value;
        // Later signals that completed first now count too.
        std::set<uint64_t>& early = early_[sem];
        while (!early.empty() && *early.begin() == value + 1) {
            early.erase(early.begin());
            ++value;
        }
    } else {
        early_[sem].insert(ordinal);
        return;
    }
    sem_changed_.notify(sc_core::SC_ZERO_TIME);
}

void ProcessingElement::unit_thread(int unit) {
    while (true) {
        sc_core::wait(start_[unit]);
        const Program* program = program_;
        const ProgramSource* source = program->source.get();
        const uint64_t n = source ? source->count(Unit(unit)) : queues_[unit].size();
        Instruction generated;
        for (uint64_t k = 0; k < n; ++k) {
            uint64_t index = source ? source->at(Unit(unit), k, generated) : queues_[unit][k];
            const Instruction& ins = source ? generated : program->instructions[index];
            wait_for(ins, index);
            double start = now_ns();
            bool ok = true;
            switch (ins.op) {
            case Op::DmaRead:
            case Op::DmaWrite: { // asynchronous: the unit issues and moves on
                DmaJob& job = take_job();
                job.ins = ins;
                job.index = int64_t(index);
                job.seq = next_seq_++;
                if (ins.op == Op::DmaRead)
                    loads_in_flight_.insert(job.seq);
                // After the start latency, the instruction's descriptors go to the engines no faster
                // than the engines' time for its shape (per-packet set-up and bytes, dma_cost.h),
                // behind earlier instructions on the same engines. A contiguous 1-D transfer needs
                // no 2-D descriptor generation: only the start latency.
                job.occupancy = ins.contiguous
                                    ? Occupancy{start + dma_.config().start_latency.ns,
                                                start + dma_.config().start_latency.ns}
                                    : dma_.book_instruction(dma_transfer_shape(ins),
                                                            start + dma_.config().start_latency.ns);
                dma_issue_busy_ns_.add(job.occupancy.end_ns - job.occupancy.start_ns);
                if (program->dma_records)
                    record_.dma_issue_ns.push_back(start);
                launch(job);
                continue;
            }
            case Op::Fetch:
                ok = tensor.fetch(ins);
                break;
            case Op::Matmul:
                ok = tensor.matmul(ins);
                break;
            case Op::Copy:
                ok = vector.copy(ins);
                break;
            case Op::VectorOp:
                ok = vector.op(ins);
                break;
            case Op::Activation:
                ok = scalar.activation(ins);
                break;
            case Op::Barrier:
                if (!program->barrier)
                    throw std::invalid_argument(fmt::format("{}: a barrier in a program without a grid", name()));
                program->barrier();
                break;
            }
            if (!ok)
                sim_error(fmt::format("{}: tile {} {}: SBUF/PSUM access out of range", name(), ins.tile,
                                      stage_name(ins.stage)),
                          msg::kPeRange);
            complete(ins, int64_t(index), start, now_ns());
        }
    }
}

ProcessingElement::DmaJob& ProcessingElement::take_job() {
    if (free_jobs_.empty())
        return jobs_.emplace_back();
    DmaJob* job = free_jobs_.back();
    free_jobs_.pop_back();
    return *job;
}

void ProcessingElement::launch(DmaJob& job) {
    if (job.has_thread) {  // a pooled thread waiting on `start`: runs in this evaluation phase
        job.start.notify();
        return;
    }
    job.has_thread = true;
    sc_core::sc_spawn_options opts;
    sc_core::sc_spawn(
        [this, &job] {
            while (true) {
                dma_job(job);
                free_jobs_.push_back(&job);
                sc_core::wait(job.start);
            }
        },
        nullptr, &opts);
}

void ProcessingElement::dma_job(DmaJob& job) {
    const Instruction& ins = job.ins;
    // Semaphore wait, descriptor generation and queue start: paid once per DMA instruction.
    // The instruction's turn on the DMA issue was booked when it issued, so instructions
    // issued at the same time keep their program order.
    Occupancy occ = job.occupancy;
    sc_core::wait(until(occ.start_ns));
    // A store's descriptors follow the loads issued before it through the engines' rings: its
    // data leaves once their data has landed (stores never overtake earlier loads).
    if (ins.op == Op::DmaWrite)
        while (!loads_in_flight_.empty() && *loads_in_flight_.begin() < job.seq)
            sc_core::wait(loads_changed_);
    // Instructions ready at the same moment (issued together, or pre-built ones whose start latency
    // ends together) reach the queues in issue order, as the queues are FIFO: the scheduler would
    // otherwise run their threads in any order.
    ready_to_post_.insert(job.seq);
    sc_core::wait(sc_core::SC_ZERO_TIME);
    while (*ready_to_post_.begin() != job.seq)
        sc_core::wait(post_turn_);
    double t0 = now_ns();
    uint64_t chunk = ins.descriptor_bytes ? ins.descriptor_bytes : cfg_.dma_descriptor_bytes;
    runs_.clear();
    size_t n = dma_descriptors(ins, chunk, runs_);
    job.descriptors.resize(n);
    job.flow = nctlm::trace().enabled() ? nctlm::trace().new_flow() : 0;
    job.left = uint32_t(n);
    job.last_occupancy_end = occ.end_ns;
    double ns_per_byte = (occ.end_ns - occ.start_ns) / double(ins.bytes);
    double first_post = t0;
    uint64_t before = 0;  // bytes of the descriptors posted before this one
    // Every descriptor is built before the first wait: runs_ is scratch shared by the jobs, and a
    // paced job still posting while the next one takes its turn would read the other's runs.
    for (size_t j = 0; j < n; ++j) {
        job.descriptors[j].address = runs_[j].address;
        job.descriptors[j].bytes = runs_[j].bytes;
    }
    for (size_t j = 0; j < n; ++j) {
        DmaDescriptor& d = job.descriptors[j];
        d.write = ins.op == Op::DmaWrite;
        d.queue = ins.contiguous || ins.spread ? uint32_t((ins.queue + j) % dma_.config().queues) : ins.queue;
        d.trace_flow = job.flow;  // the instruction's span and its descriptors' spans, linked
        d.on_complete = [&job](DmaDescriptor&) {
            if (--job.left == 0)
                job.done.notify(sc_core::SC_ZERO_TIME);
        };
        if (!ins.contiguous)
            sc_core::wait(until(t0 + double(before) * ns_per_byte));
        before += d.bytes;
        dma_.post(d);
        if (j == 0) {  // the next ready instruction's turn (a paced one keeps posting behind it)
            ready_to_post_.erase(job.seq);
            post_turn_.notify(sc_core::SC_ZERO_TIME);
        }
    }
    if (n == 0) {
        ready_to_post_.erase(job.seq);
        post_turn_.notify(sc_core::SC_ZERO_TIME);
    }
    if (job.left > 0)
        sc_core::wait(job.done);
    sc_core::wait(until(job.last_occupancy_end + (t0 - occ.start_ns)));
    if (ins.op == Op::DmaRead) {
        if (program_->dma_records)
            record_.load_done_ns.push_back(now_ns());
        loads_in_flight_.erase(job.seq);
        loads_changed_.notify(sc_core::SC_ZERO_TIME);
    }
    dma_instructions_.add(1);
    dma_bytes_.add(double(ins.bytes));
    complete(ins, job.index, first_post, now_ns(), job.flow);
}

} // namespace nctlm
