#include "models/pe/processing_element.h"

#include "models/checker/bind.h"
#include "models/common/errors.h"
#include "models/common/sim.h"
#include "models/common/trace.h"

#include <fmt/format.h>
#include <functional>

namespace nctlm {

namespace {
const char* kUnitNames[kUnits] = {"dma_in", "fetch", "tensor", "vector", "dma_out", "scalar"};
}

ProcessingElement::ProcessingElement(sc_core::sc_module_name name, DmaEngine& dma, const PeConfig& cfg)
    : sc_module(name), sbuf("sbuf", cfg), psum("psum", cfg), tensor("tensor", cfg), vector("vector", cfg), scalar("scalar", cfg),
      dma_(dma), cfg_(cfg), dma_pacer_(cfg.dma_bandwidth),
      instructions_(stats().counter(std::string(this->name()) + ".instructions", "")),
      dma_instructions_(stats().counter(std::string(this->name()) + ".dma_instructions", "")),
      dma_bytes_(stats().counter(std::string(this->name()) + ".dma_bytes", "B")) {
    nctlm::bind(tensor.sbuf_socket, sbuf.socket, "tensor_sbuf");
    nctlm::bind(tensor.psum_socket, psum.socket, "tensor_psum");
    nctlm::bind(vector.psum_socket, psum.socket, "vector_psum");
    nctlm::bind(vector.sbuf_socket, sbuf.socket, "vector_sbuf");
    nctlm::bind(scalar.psum_socket, psum.socket, "scalar_psum");
    nctlm::bind(scalar.sbuf_socket, sbuf.socket, "scalar_sbuf");
    for (int u = 0; u < kUnits; ++u) {
        tracks_[u] = nctlm::trace().enabled() ? nctlm::trace().track(this->name(), kUnitNames[u]) : -1;
        sc_core::sc_spawn_options opts;
        sc_core::sc_spawn([this, u] { unit_thread(u); }, (std::string("unit_") + kUnitNames[u]).c_str(),
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
    pending_ = program.size();
    record_ = PeRunRecord{};
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

void ProcessingElement::wait_for(const Instruction& ins) {
    for (const SemWait& w : ins.waits) {
        if (w.sem >= sems_.size())
            throw std::invalid_argument(fmt::format("{}: semaphore {} does not exist", name(), w.sem));
        while (sems_[w.sem] < w.value)
            sc_core::wait(sem_changed_);
    }
}

void ProcessingElement::complete(const Instruction& ins, int64_t index, double start, double end, uint64_t flow) {
    if (ins.tile < record_.tiles.size())
        record_.tiles[ins.tile][int(ins.stage)].cover(start, end);
    if (tracks_[int(ins.unit)] >= 0) {
        SpanArgs a;
        bool dma = ins.op == Op::DmaRead || ins.op == Op::DmaWrite;
        a.command = stage_name(ins.stage);
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
        nctlm::trace().span(tracks_[int(ins.unit)], stage_name(ins.stage), start, end, a);
    }
    instructions_.add(1);
    if (ins.signal >= 0) {
        ++sems_.at(size_t(ins.signal));
        sem_changed_.notify(sc_core::SC_ZERO_TIME);
    }
    if (--pending_ == 0)
        all_done_.notify(sc_core::SC_ZERO_TIME);
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
            wait_for(ins);
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
                // The PE's DMA issue hands an instruction's descriptors to the engines no faster
                // than pe.dma_bandwidth, after the start latency, one instruction after another.
                // A contiguous 1-D transfer needs no 2-D descriptor generation: only the start latency.
                job.occupancy = ins.contiguous
                                    ? Occupancy{start + dma_.config().start_latency.ns,
                                                start + dma_.config().start_latency.ns}
                                    : dma_pacer_.reserve(start + dma_.config().start_latency.ns, double(ins.bytes));
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
    double t0 = now_ns();
    uint64_t chunk = ins.descriptor_bytes ? ins.descriptor_bytes : cfg_.dma_descriptor_bytes;
    size_t n = size_t((ins.bytes + chunk - 1) / chunk);
    job.descriptors.resize(n);
    job.flow = nctlm::trace().enabled() ? nctlm::trace().new_flow() : 0;
    job.left = uint32_t(n);
    job.last_occupancy_end = occ.end_ns;
    double ns_per_byte = (occ.end_ns - occ.start_ns) / double(ins.bytes);
    double first_post = t0;
    for (size_t j = 0; j < n; ++j) {
        DmaDescriptor& d = job.descriptors[j];
        d.address = ins.address + j * chunk;
        d.bytes = std::min<uint64_t>(chunk, ins.bytes - j * chunk);
        d.write = ins.op == Op::DmaWrite;
        d.queue = ins.contiguous ? uint32_t((ins.queue + j) % dma_.config().queues) : ins.queue;
        d.trace_flow = job.flow;  // the instruction's span and its descriptors' spans, linked
        d.on_complete = [&job](DmaDescriptor&) {
            if (--job.left == 0)
                job.done.notify(sc_core::SC_ZERO_TIME);
        };
        if (!ins.contiguous)
            sc_core::wait(until(t0 + double(j * chunk) * ns_per_byte));
        dma_.post(d);
    }
    if (job.left > 0)
        sc_core::wait(job.done);
    sc_core::wait(until(job.last_occupancy_end + (t0 - occ.start_ns)));
    if (ins.op == Op::DmaRead) {
        record_.load_done_ns.push_back(now_ns());
        loads_in_flight_.erase(job.seq);
        loads_changed_.notify(sc_core::SC_ZERO_TIME);
    }
    dma_instructions_.add(1);
    dma_bytes_.add(double(ins.bytes));
    complete(ins, job.index, first_post, now_ns(), job.flow);
}

} // namespace nctlm
