#pragma once

#include "models/common/config.h"

#include <vector>

namespace nctlm {

enum class HbmModel { Banked, Pipe };
enum class PagePolicy { Open, Closed };
enum class RefreshMode { AllBank, PerBank, Off };
enum class PcHash { None, Fold };

// HBM stacks behind controllers; every key mirrors `hbm.*` in the platform YAML.
// Two models of a pseudo-channel share the address map and the controller's sockets:
//  - banked: bank groups x banks with open rows, DRAM command timing, refresh, an FR-FCFS
//    scheduler over finite read/write queues (models/hbm/pc_scheduler.h);
//  - pipe: a fixed-rate first-come-first-served pipe (the wave-1 model, kept for ablation/speed).
struct HbmConfig {
    uint32_t stacks = 0;
    uint64_t stack_capacity = 0;
    uint32_t pseudo_channels = 0;  // per stack
    Bandwidth pc_bandwidth;
    uint64_t interleave = 0;       // consecutive chunks of this size go to consecutive PCs
    PcHash pc_hash = PcHash::None; // fold: the chunk's higher base-PC digits are added to its PC
    uint64_t stack_interleave = 0; // granularity across stacks in the interleaved window
    uint64_t interleaved_base = 0; // start of the stack-interleaved address window
    Duration controller_latency;   // pipe model: request arrival -> PC may start (front end + tRCD + CL)
    bool functional = false;       // store data (sparse pages) so read-back can be checked

    HbmModel model = HbmModel::Banked;
    // banked model: geometry
    Frequency dram_clock;          // tCK = 1 / dram_clock; every timing is rounded up to whole tCK
    uint64_t access_bytes = 0;     // one column access (bus width x burst length)
    uint32_t bank_groups = 0, banks_per_group = 0;
    uint64_t row_bytes = 0;
    // address bits of the stack offset (the PC bits follow from `interleave`; the row is every other bit)
    std::string column_bits, bank_group_bits, bank_bits;
    // banked model: timing (ns as written; DramTiming rounds each up to tCK)
    Duration t_rcd, t_rp, t_ras, t_rc, t_cl, t_cwl, t_ccd_s, t_ccd_l, t_rrd_s, t_rrd_l, t_faw, t_wtr_s, t_wtr_l,
        t_rtw, t_wr, t_rtp, t_refi, t_rfc, t_refi_pb, t_rfc_pb;
    Duration front_end_latency;    // arrival -> the scheduler may issue the request's first command
    RefreshMode refresh = RefreshMode::AllBank;
    PagePolicy page_policy = PagePolicy::Open;
    uint32_t read_queue = 0, write_queue = 0;      // per pseudo-channel, in column-access entries
    uint32_t ingress_queue = 0;                    // per stack, requests waiting for their PC's queue
    uint32_t write_high = 0, write_low = 0;        // write-drain watermarks

    Bandwidth stack_bandwidth() const { return Bandwidth{pc_bandwidth.bytes_per_s * pseudo_channels}; }
    static const FieldList<HbmConfig>& fields();
};

// Parses "5-9", "10,15", "16-17,20" into ascending bit positions; throws UnitError.
std::vector<uint32_t> parse_bit_list(const std::string& text);

// Cross-field checks of the banked model (geometry vs bits, a bit used twice, tRAS < tRCD...).
// Returns "" or {key, message} of the first problem.
struct HbmProblem {
    std::string key, message;
};
std::optional<HbmProblem> check_hbm(const HbmConfig& c);
// The keys of the hbm section that the chosen model does not read: controller_latency under the
// banked model; the bank, row, timing, refresh and queue keys under the pipe.
std::vector<std::string> hbm_keys_unread_by(const HbmConfig& c);

} // namespace nctlm
