#include "models/hbm/hbm_config.h"

#include <algorithm>
#include <fmt/format.h>
#include <map>

namespace nctlm {

// Sources of the banked defaults: DRAMsim3 configs/HBM2_8Gb_x128.ini (tCK = 1 ns there, so its
// cycle counts are ns); the model rounds each up to whole cycles of hbm.dram_clock.
#define INI "DRAMsim3 HBM2_8Gb_x128.ini"

namespace {
// Bounds of the DRAM timings: JEDEC HBM timings are tens of ns (tRFC a few hundred, tREFI a few us);
// 10 us (100 us for a refresh interval) leaves two orders of magnitude for studies while refusing a
// value such as 9000 s, which would keep the PCs refreshing for days of simulated time.
constexpr double kDramTimingMax = 1e4, kRefreshIntervalMax = 1e5;  // ns
} // namespace

const FieldList<HbmConfig>& HbmConfig::fields() {
    using C = HbmConfig;
    static const FieldList<C> f = {
        count("stacks", &C::stacks, nullptr, 1, 64, "HBM stacks on the chip (trn1: 2, trn2: 4; Neuron arch guide)")
            .documented("NKI Trainium/Inferentia2 arch guide, device diagram (2 HBM stacks); NKI Trainium2 guide "
                        "(4 HBM stacks)"),
        bytes("stack_capacity", &C::stack_capacity, nullptr, 1 << 20, 1ull << 40,
              "capacity per stack (trn1: 32 GiB / 2 stacks; trn2: 96 GiB / 4)")
            .documented("Trainium / Trainium2 Architecture pages, Device Memory (32 GiB; 96 GiB)"),
        count("pseudo_channels", &C::pseudo_channels, nullptr, 1, 256,
              "pseudo-channels per stack (HBM2e: 8 channels x 2 PCs, JESD235)")
            .documented("JESD235 / JESD238"),
        bandwidth("pc_bandwidth", &C::pc_bandwidth, nullptr,
                  "peak data-bus rate of one pseudo-channel (64 bit x 3.2 Gb/s = 25.6 GB/s; x16 = 410 GB/s/stack)",
                  1e9)  // below 1 GB/s no HBM generation; 1 B/s would take seconds per 32 B access
            .documented("JESD235 pin rate; chip totals: Trainium2 Architecture page, Device Memory 2.9 TB/sec; "
                        "Trainium2 comparison table, Trainium HBM 0.8 TB/sec"),
        bytes("interleave", &C::interleave, "2 KiB", 64, 1 << 30, "address interleave granularity across PCs")
            .assumed("1 KiB..4 KiB", "one DMA burst per PC"),
        choice("pc_hash", &C::pc_hash, {{"none", PcHash::None}, {"fold", PcHash::Fold}}, "none",
               "pseudo-channel of a chunk: none = chunk mod PCs; fold = (sum of the chunk index's base-PC digits) mod "
               "PCs, so power-of-two strides spread over every PC as under a hashing controller")
            .assumed("none|fold", "controllers hash channel bits; no public Trainium address map"),
        bytes("stack_interleave", &C::stack_interleave, "4 KiB", 64, 1 << 30,
              "granularity across stacks inside the interleaved window")
            .assumed("2 KiB..8 KiB", "address-map choice"),
        bytes("interleaved_base", &C::interleaved_base, "1 TiB", 0, 1ull << 50,
              "base of the stack-interleaved alias window (same memory, spread over all stacks)")
            .setting("address-map alias, not hardware"),
        duration("controller_latency", &C::controller_latency, "29 ns",
                 "pipe model only: arrival to first data (front end + tRCD + RL; HBM2 JEDEC 12 + 17 tCK at 1 GHz)")
            .documented("JEDEC HBM2/HBM3 tRCD + RL (pipe model)"),
        flag("functional", &C::functional, "false", "store data in sparse pages (read-back checks)")
            .setting("simulator switch"),
        choice("model", &C::model, {{"banked", HbmModel::Banked}, {"pipe", HbmModel::Pipe}}, "banked",
               "banked: bank/row state, DRAM timing, refresh, FR-FCFS over finite queues; pipe: fixed-rate FCFS "
               "pipe per PC (ablation, speed)")
            .setting("model choice: banked, or the pipe for ablation"),
        frequency("dram_clock", &C::dram_clock, "1.6 GHz",
                  "DRAM command clock; tCK = 0.625 ns at 3.2 Gb/s DDR (HBM2e); timings round up to whole tCK")
            .documented("JESD235: 3.2 Gb/s DDR pins, tCK 0.625 ns"),
        bytes("access_bytes", &C::access_bytes, "32 B", 8, 4096,
              "bytes moved by one column command: 64-bit PC x BL4 (JESD235 pseudo-channel mode)")
            .documented("JESD235 pseudo-channel mode: 64 bit x BL4"),
        count("bank_groups", &C::bank_groups, "4", 1, 64, "bank groups per pseudo-channel (JESD235: 4)")
            .documented("JESD235"),
        count("banks_per_group", &C::banks_per_group, "4", 1, 64, "banks per bank group (JESD235 8 Gb: 4)")
            .documented("JESD235 8 Gb die"),
        bytes("row_bytes", &C::row_bytes, "1 KiB", 64, 1 << 20, "row (page) size per pseudo-channel (JESD235: 1 KiB)")
            .documented("JESD235 pseudo-channel page size"),
        text("column_bits", &C::column_bits, "5-9",
             "stack-offset bits selecting the column (log2(row_bytes / access_bytes) bits)")
            .setting("address map (must match the geometry)"),
        text("bank_group_bits", &C::bank_group_bits, "10,15",
             "stack-offset bits selecting the bank group (bit 10 splits a 2 KiB burst over two groups)")
            .assumed("", "address map: no public Trainium map; chosen so a 2 KiB burst spans two bank groups"),
        text("bank_bits", &C::bank_bits, "16-17", "stack-offset bits selecting the bank in its group")
            .assumed("", "address map: no public Trainium map"),
        duration("t_rcd", &C::t_rcd, "14 ns", "ACT to RD/WR (tRCDRD = tRCDWR: the ini's 14 cycles of its 1 ns tCK; 23 tCK at dram_clock 1.6 GHz; " INI ")", kDramTimingMax)
            .documented("DRAMsim3 HBM2_8Gb_x128.ini (JEDEC-class HBM2 timing)"),
        duration("t_rp", &C::t_rp, "14 ns", "PRE to ACT, same bank (tRP: the ini's 14 cycles of its 1 ns tCK; 23 tCK at dram_clock 1.6 GHz; " INI ")", kDramTimingMax)
            .documented("DRAMsim3 HBM2_8Gb_x128.ini"),
        duration("t_ras", &C::t_ras, "34 ns", "ACT to PRE, same bank (tRAS: the ini's 34 cycles of its 1 ns tCK; 55 tCK at dram_clock 1.6 GHz; " INI ")", kDramTimingMax)
            .documented("DRAMsim3 HBM2_8Gb_x128.ini"),
        duration("t_rc", &C::t_rc, "48.75 ns", "ACT to ACT, same bank (tRAS + tRP in whole 0.625 ns cycles; " INI ")", kDramTimingMax)
            .documented("DRAMsim3 HBM2_8Gb_x128.ini: tRAS + tRP"),
        duration("t_cl", &C::t_cl, "14 ns", "RD to first data (CL: the ini's 14 cycles of its 1 ns tCK; 23 tCK at dram_clock 1.6 GHz; " INI ")", kDramTimingMax)
            .documented("DRAMsim3 HBM2_8Gb_x128.ini"),
        duration("t_cwl", &C::t_cwl, "4 ns", "WR to first data (CWL: the ini's 4 cycles of its 1 ns tCK; 7 tCK at dram_clock 1.6 GHz; " INI ")", kDramTimingMax)
            .documented("DRAMsim3 HBM2_8Gb_x128.ini"),
        duration("t_ccd_s", &C::t_ccd_s, "1 ns", "column to column, different bank group (tCCD_S; " INI ")", kDramTimingMax)
            .documented("DRAMsim3 HBM2_8Gb_x128.ini"),
        duration("t_ccd_l", &C::t_ccd_l, "2 ns", "column to column, same bank group (tCCD_L; " INI ")", kDramTimingMax)
            .documented("DRAMsim3 HBM2_8Gb_x128.ini"),
        duration("t_rrd_s", &C::t_rrd_s, "4 ns", "ACT to ACT, different bank group (tRRD_S; " INI ")", kDramTimingMax)
            .documented("DRAMsim3 HBM2_8Gb_x128.ini"),
        duration("t_rrd_l", &C::t_rrd_l, "6 ns", "ACT to ACT, same bank group (tRRD_L; " INI ")", kDramTimingMax)
            .documented("DRAMsim3 HBM2_8Gb_x128.ini"),
        duration("t_faw", &C::t_faw, "30 ns", "window holding at most four ACTs (tFAW; " INI ")", kDramTimingMax)
            .documented("DRAMsim3 HBM2_8Gb_x128.ini"),
        duration("t_wtr_s", &C::t_wtr_s, "6 ns",
                 "end of write data to RD, different bank group (tWTR_S; " INI ")", kDramTimingMax)
            .documented("DRAMsim3 HBM2_8Gb_x128.ini"),
        duration("t_wtr_l", &C::t_wtr_l, "8 ns", "end of write data to RD, same bank group (tWTR_L; " INI ")", kDramTimingMax)
            .documented("DRAMsim3 HBM2_8Gb_x128.ini"),
        duration("t_rtw", &C::t_rtw, "13.75 ns",
                 "RD to WR bus turnaround: RL + burst - WL + tRTRS (DRAMsim3 rule; 23 + 2 - 7 + 4 tCK at 0.625 ns)", kDramTimingMax)
            .documented("DRAMsim3 read_to_write rule with the ini values"),
        duration("t_wr", &C::t_wr, "16 ns", "end of write data to PRE (write recovery tWR; " INI ")", kDramTimingMax)
            .documented("DRAMsim3 HBM2_8Gb_x128.ini"),
        duration("t_rtp", &C::t_rtp, "6 ns", "RD to PRE (tRTP_L: the ini's 6 cycles of its 1 ns tCK; 10 tCK at dram_clock 1.6 GHz; " INI ")", kDramTimingMax)
            .documented("DRAMsim3 HBM2_8Gb_x128.ini tRTP_L"),
        duration("t_refi", &C::t_refi, "3900 ns", "all-bank refresh interval (tREFI; " INI ")", kRefreshIntervalMax)
            .documented("DRAMsim3 HBM2_8Gb_x128.ini (JEDEC 3.9 us)"),
        duration("t_rfc", &C::t_rfc, "260 ns", "all-bank refresh cycle: every bank busy (tRFC; " INI ")", kDramTimingMax)
            .documented("DRAMsim3 HBM2_8Gb_x128.ini"),
        duration("t_refi_pb", &C::t_refi_pb, "128 ns",
                 "per-bank refresh: interval between two banks' refreshes (tREFIb; " INI ")", kRefreshIntervalMax)
            .documented("DRAMsim3 HBM2_8Gb_x128.ini tREFIb"),
        duration("t_rfc_pb", &C::t_rfc_pb, "130 ns",
                 "per-bank refresh cycle (assumed half of tRFC; the ini gives no tRFCb)", kDramTimingMax)
            .assumed("x0.5..x2", "tRFC / 2; the ini gives no tRFCb"),
        duration("front_end_latency", &C::front_end_latency, "0.625 ns",
                 "banked model: arrival to the scheduler seeing the request (one tCK, as DRAMsim3's pipeline)", kDramTimingMax)
            .assumed("0 ns..5 ns", "one tCK as DRAMsim3's pipeline; no public figure"),
        choice("refresh", &C::refresh,
               {{"all_bank", RefreshMode::AllBank}, {"per_bank", RefreshMode::PerBank}, {"off", RefreshMode::Off}},
               "all_bank", "refresh scheme (JESD235: all-bank REF every tREFI; per-bank REFSB optional)")
            .setting("refresh scheme"),
        choice("page_policy", &C::page_policy, {{"open", PagePolicy::Open}, {"closed", PagePolicy::Closed}}, "open",
               "open: rows stay open for later hits; closed: precharge after each request")
            .setting("controller policy (open, as DRAMsim3)"),
        count("read_queue", &C::read_queue, "32", 1, 65536,
              "read queue per pseudo-channel in column-access entries (access_bytes each); a request larger than "
              "the queue enters it alone")
            .assumed("x0.5..x4", "reference simulator's default, stated as such: DRAMsim3 trans_queue_size = 32 per "
                                 "channel (HBM2_8Gb_x128.ini; its per-bank command queues, cmd_queue_size = 8, are "
                                 "the scheduler's look-ahead here); no public Trainium figure"),
        count("write_queue", &C::write_queue, "32", 1, 65536,
              "write buffer per pseudo-channel in column-access entries; writes are acknowledged once inside")
            .assumed("x1..x4", "reference simulator's default, stated as such: DRAMsim3's write buffer of "
                               "trans_queue_size = 32 per channel; not below the drain watermark"),
        count("ingress_queue", &C::ingress_queue, "64", 0, 1 << 20,
              "requests a stack accepts ahead of full PC queues, so one busy PC does not block the others "
              "(0: head-of-line blocking at the stack port; at least the window: a queue per PC)")
            .assumed("x0.25..x4", "no public depth: DRAMsim3 has none (its front ends hold one refused request, "
                                  "in order); public HBM controllers take requests per PC (Intel HBM2 IP: one AXI "
                                  "port per pseudo-channel; AMD PG276: 16 AXI ports per stack behind a crossbar); "
                                  "docs/validation/hbm.md measures its effect against DRAMsim3 at W = 256, 512"),
        count("write_high", &C::write_high, "32", 1, 65536,
              "write-buffer entries that start a write drain (DRAMsim3: a full buffer)")
            .assumed("16..32", "DRAMsim3: drain when the buffer is full"),
        count("write_low", &C::write_low, "0", 0, 65536,
              "write-buffer entries that end a write drain; reads wait during a drain (DRAMsim3 moves them all "
              "into per-bank command queues, where earlier reads keep issuing)")
            .assumed("0..16", "DRAMsim3 drains the whole buffer, but not exclusively: docs/validation/hbm.md, deep "
                              "windows"),
    };
    return f;
}

std::vector<uint32_t> parse_bit_list(const std::string& text) {
    std::vector<uint32_t> bits;
    size_t at = 0;
    auto number = [&](size_t& pos) {
        size_t start = pos;
        while (pos < text.size() && text[pos] == ' ')
            ++pos;
        start = pos;
        while (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos])))
            ++pos;
        if (pos == start || pos - start > 2)
            throw UnitError("'" + text + "' is not a list of bit positions like \"5-9\" or \"10,15\"");
        uint32_t v = uint32_t(std::stoul(text.substr(start, pos - start)));
        while (pos < text.size() && text[pos] == ' ')
            ++pos;
        if (v > 63)
            throw UnitError(fmt::format("bit {} is beyond a 64-bit address", v));
        return v;
    };
    if (text.find_first_not_of(' ') == std::string::npos)
        return bits;
    while (true) {
        uint32_t lo = number(at), hi = lo;
        if (at < text.size() && text[at] == '-') {
            ++at;
            hi = number(at);
            if (hi < lo)
                throw UnitError(fmt::format("'{}': range {}-{} runs backwards", text, lo, hi));
        }
        for (uint32_t b = lo; b <= hi; ++b)
            bits.push_back(b);
        if (at >= text.size())
            break;
        if (text[at] != ',')
            throw UnitError("'" + text + "' is not a list of bit positions like \"5-9\" or \"10,15\"");
        ++at;
    }
    std::sort(bits.begin(), bits.end());
    return bits;
}

namespace {
bool power_of_two(uint64_t v) { return v && !(v & (v - 1)); }
uint32_t log2u(uint64_t v) {
    uint32_t n = 0;
    while (v > 1) {
        v >>= 1;
        ++n;
    }
    return n;
}
} // namespace

std::vector<std::string> hbm_keys_unread_by(const HbmConfig& c) {
    if (c.model == HbmModel::Banked)
        return {"controller_latency"};
    // The pipe reads the geometry, the address map and its own latency; the rest is the banked model's.
    static const std::vector<std::string> pipe_reads = {"stacks",           "stack_capacity", "pseudo_channels",
                                                        "pc_bandwidth",     "interleave",     "stack_interleave",
                                                        "interleaved_base", "pc_hash",          "controller_latency",
                                                        "functional",
                                                        "model"};
    std::vector<std::string> keys;
    for (auto& f : HbmConfig::fields())
        if (std::find(pipe_reads.begin(), pipe_reads.end(), f.key) == pipe_reads.end())
            keys.push_back(f.key);
    return keys;
}

std::optional<HbmProblem> check_hbm(const HbmConfig& c) {
    if (c.model != HbmModel::Banked)
        return std::nullopt;
    auto problem = [](std::string key, std::string msg) { return std::optional<HbmProblem>(HbmProblem{key, msg}); };
    if (!power_of_two(c.pseudo_channels))
        return problem("pseudo_channels", fmt::format("the banked model needs a power-of-two pseudo-channel count, "
                                                      "not {} (or set hbm.model: pipe)", c.pseudo_channels));
    if (!power_of_two(c.interleave))
        return problem("interleave", "the banked model needs a power-of-two hbm.interleave");
    if (!power_of_two(c.access_bytes))
        return problem("access_bytes", "hbm.access_bytes must be a power of two");
    if (!power_of_two(c.row_bytes) || c.row_bytes < c.access_bytes)
        return problem("row_bytes", "hbm.row_bytes must be a power of two of at least hbm.access_bytes");
    if (c.interleave < c.access_bytes)
        return problem("interleave", "hbm.interleave must be at least hbm.access_bytes");
    if (!power_of_two(c.bank_groups) || !power_of_two(c.banks_per_group))
        return problem("bank_groups", "hbm.bank_groups and hbm.banks_per_group must be powers of two");
    struct Use {
        const char* key;
        std::vector<uint32_t> bits;
        uint32_t want;
    };
    std::vector<Use> uses = {{"column_bits", {}, log2u(c.row_bytes / c.access_bytes)},
                             {"bank_group_bits", {}, log2u(c.bank_groups)},
                             {"bank_bits", {}, log2u(c.banks_per_group)}};
    const std::string* texts[] = {&c.column_bits, &c.bank_group_bits, &c.bank_bits};
    for (size_t i = 0; i < uses.size(); ++i) {
        try {
            uses[i].bits = parse_bit_list(*texts[i]);
        } catch (const UnitError& e) {
            return problem(uses[i].key, std::string("hbm.") + uses[i].key + ": " + e.what());
        }
    }
    std::map<uint32_t, std::string> owner;
    for (uint32_t b = 0; b < log2u(c.access_bytes); ++b)
        owner[b] = "the byte within an access (access_bytes)";
    for (uint32_t b = 0; b < log2u(c.pseudo_channels); ++b)
        owner[log2u(c.interleave) + b] = "the pseudo-channel (interleave x pseudo_channels)";
    // A bit at or above the stack's offset width is 0 for every address: the map would put all
    // traffic in one bank (group) or column and still run.
    uint32_t offset_bits = c.stack_capacity > 1 ? log2u(c.stack_capacity - 1) + 1 : 0;
    for (auto& u : uses)
        for (uint32_t b : u.bits)
            if (b >= offset_bits)
                return problem(u.key, fmt::format("hbm.{} uses bit {}, beyond the stack's {} offset bits (0..{} for "
                                                  "hbm.stack_capacity {}): every address would have it 0",
                                                  u.key, b, offset_bits, offset_bits - 1,
                                                  format_bytes(c.stack_capacity)));
    for (auto& u : uses) {
        if (u.bits.size() != u.want)
            return problem(u.key, fmt::format("hbm.{} names {} bits but the geometry needs {}", u.key, u.bits.size(),
                                              u.want));
        for (size_t i = 0; i < u.bits.size(); ++i) {
            if (i > 0 && u.bits[i] == u.bits[i - 1])
                return problem(u.key, fmt::format("hbm.{} uses bit {} twice", u.key, u.bits[i]));
            if (auto it = owner.find(u.bits[i]); it != owner.end())
                return problem(u.key, fmt::format("hbm.{} uses bit {}, which already selects {}", u.key, u.bits[i],
                                                  it->second));
            owner[u.bits[i]] = std::string("hbm.") + u.key;
        }
    }
    if (c.t_ras < c.t_rcd)
        return problem("t_ras", "hbm.t_ras (" + format_duration(c.t_ras) + ") is shorter than hbm.t_rcd (" +
                                    format_duration(c.t_rcd) + "): a row must stay open at least until it can be read");
    if (c.t_rc < c.t_ras)
        return problem("t_rc", "hbm.t_rc must be at least hbm.t_ras");
    if (c.t_ccd_l < c.t_ccd_s)
        return problem("t_ccd_l", "hbm.t_ccd_l must be at least hbm.t_ccd_s");
    if (c.t_rrd_l < c.t_rrd_s)
        return problem("t_rrd_l", "hbm.t_rrd_l must be at least hbm.t_rrd_s");
    if (c.refresh == RefreshMode::AllBank && !(c.t_rfc < c.t_refi))
        return problem("t_rfc", "hbm.t_rfc must be shorter than hbm.t_refi (the PC would refresh forever)");
    if (c.refresh == RefreshMode::PerBank && !(c.t_rfc_pb < c.t_refi_pb * double(c.bank_groups * c.banks_per_group)))
        return problem("t_rfc_pb", "hbm.t_rfc_pb must be shorter than one bank's refresh period "
                                   "(t_refi_pb x banks)");
    if (c.t_refi.ns <= 0 && c.refresh != RefreshMode::Off)
        return problem("t_refi", "hbm.t_refi must be positive (or set hbm.refresh: off)");
    if (c.write_high > c.write_queue)
        return problem("write_high", "hbm.write_high cannot exceed hbm.write_queue");
    if (c.write_low >= c.write_high)
        return problem("write_low", "hbm.write_low must be below hbm.write_high");
    return std::nullopt;
}

} // namespace nctlm
