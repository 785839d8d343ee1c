// The PE of a NeuronCore tile: SBUF, PSUM, the tensor and vector engines, and a sequencer that runs
// an instruction stream. Each unit (DMA-in issue, fetch, tensor, vector, DMA-out issue) executes its
// own instructions in order and waits on counting semaphores for the others, so stages of different
// tiles overlap as far as the program's buffers allow. DMA instructions go through the tile's
// DmaEngine (-> NoC -> HBM): each pays dma.start_latency, then is cut into descriptors posted no
// faster than the DMA engines' time for the instruction's shape (per-packet set-up and bytes,
// dma_cost.h). Traffic generators may still post raw descriptors.
#pragma once

#include "models/common/bandwidth_pipe.h"
#include "models/common/stats.h"
#include "models/dma/dma_engine.h"
#include "models/pe/dma_runs.h"
#include "models/pe/instruction.h"
#include "models/pe/pe_config.h"
#include "models/pe/psum.h"
#include "models/pe/sbuf.h"
#include "models/pe/scalar_engine.h"
#include "models/pe/tensor_engine.h"
#include "models/pe/vector_engine.h"

#include <array>
#include <deque>
#include <set>
#include <string>
#include <systemc>
#include <vector>

namespace nctlm {

// A span of simulated time, ns; grows to cover every piece added.
struct Interval {
    double start = -1, end = -1;
    void cover(double s, double e) {
        start = start < 0 ? s : std::min(start, s);
        end = std::max(end, e);
    }
    double length() const { return end >= start && start >= 0 ? end - start : 0; }
};

// Timing of one executed program.
struct PeRunRecord {
    double submit_ns = 0;                             // execute() called: the runtime launches the kernel
    double launch_ns = 0;                             // + launch overhead: the sequencer starts
    double done_ns = 0;                               // last instruction completed
    double end_ns = 0;                                // + pipeline tail: the kernel is done
    std::vector<std::array<Interval, kStages>> tiles; // per tile, per stage: first start .. last end
    std::vector<double> dma_issue_ns;                 // per DMA instruction: issue (before the start latency)
    std::vector<double> load_done_ns;                 // per DMA read, in completion order: its last byte in
};

class ProcessingElement : public sc_core::sc_module {
public:
    ProcessingElement(sc_core::sc_module_name name, DmaEngine& dma, const PeConfig& cfg);
    // Posts a raw descriptor on the tile's DMA engine now (no start latency, no pacing).
    void post_dma(DmaDescriptor& d) { dma_.post(d); }
    DmaEngine& dma() { return dma_; }
    const PeConfig& config() const { return cfg_; }

    // Runs `program` to completion; call from a SystemC thread. The program must outlive the call.
    PeRunRecord execute(const Program& program);
    // Units waiting on a semaphore that nothing will signal, once the simulation has stopped with
    // a program unfinished: one line each (empty when every program finished).
    std::vector<std::string> blocked_report() const;

    Sbuf sbuf;
    Psum psum;
    TensorEngine tensor;
    VectorEngine vector;
    ScalarEngine scalar;

private:
    // One DMA instruction in flight. Jobs and their threads are pooled: a finished job's thread
    // waits for the next instruction (no coroutine stack per instruction), its descriptors reused.
    struct DmaJob {
        Instruction ins;           // a copy: generated programs do not keep their instructions
        int64_t index = -1;        // in program order, for the trace
        std::vector<DmaDescriptor> descriptors;
        uint32_t left = 0;
        Occupancy occupancy{0, 0}; // its turn on the DMA engines (DmaEngine::book_instruction)
        uint64_t seq = 0;          // issue order
        uint64_t flow = 0;         // trace flow linking the instruction to its descriptors
        double last_occupancy_end = 0;
        sc_core::sc_event done, start;
        bool has_thread = false;
    };
    void unit_thread(int unit);
    void wait_for(const Instruction& ins, uint64_t index);
    void complete(const Instruction& ins, int64_t index, double start, double end, uint64_t flow = 0);
    void signal(uint32_t sem, uint64_t ordinal);
    DmaJob& take_job();
    void launch(DmaJob& job);
    void dma_job(DmaJob& job);

    DmaEngine& dma_;
    PeConfig cfg_;
    const Program* program_ = nullptr;
    std::array<std::vector<size_t>, kUnits> queues_;
    std::vector<uint64_t> sems_;
    std::vector<std::set<uint64_t>> early_;  // per semaphore: ordinals completed ahead of their turn
    std::vector<DmaRun> runs_;               // scratch: one DMA instruction's descriptors
    sc_core::sc_event sem_changed_, all_done_;
    std::array<sc_core::sc_event, kUnits> start_;
    size_t pending_ = 0;
    std::deque<DmaJob> jobs_;        // every job ever needed (as many as were in flight at once)
    std::vector<DmaJob*> free_jobs_; // finished, their threads waiting on `start`
    uint64_t next_seq_ = 0;
    std::set<uint64_t> loads_in_flight_; // issue order of load instructions not yet complete
    sc_core::sc_event loads_changed_;
    std::set<uint64_t> ready_to_post_;   // issue order of instructions about to post their descriptors
    sc_core::sc_event post_turn_;
    PeRunRecord record_;
    std::array<int, kUnits> tracks_{};
    struct Waiting {  // what each unit waits for now (deadlock reports)
        const Instruction* ins = nullptr;
        uint64_t index = 0;
        SemWait wait{0, 0};
    };
    std::array<Waiting, kUnits> waiting_{};
    Counter &instructions_, &dma_instructions_, &dma_bytes_, &dma_issue_busy_ns_;
};

} // namespace nctlm
