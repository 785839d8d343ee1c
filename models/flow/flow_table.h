// What the flow mode knows of an HBM pseudo-channel: its sustained bandwidth and its latency as
// functions of request size, access pattern, read fraction and requests outstanding, tabulated by
// running the banked model (pc_calibration.h) — never datasheet figures. One table per `hbm`
// section, named by a hash of it, so changed timings make a new table. Shipped for trn1/trn2 in
// configs/flow/ (`nctlm calibrate flow -p PLATFORM` writes them), cached for any other section.
// Pure C++ (nlohmann::json).
#pragma once

#include "models/flow/pc_calibration.h"
#include "models/hbm/hbm_config.h"

#include <array>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace nctlm::flow {

class FlowTable {
public:
    static constexpr std::array<double, 3> kReadFractions = {1.0, 0.5, 0.0};
    static constexpr std::array<uint32_t, 7> kWindows = {1, 2, 4, 8, 16, 32, 64};
    // Sequential streams sharing a PC at once (each through its own rows; kWindows.back() outstanding)
    static constexpr std::array<uint32_t, 4> kStreams = {1, 2, 4, 8};

    struct Point {           // one load: request size x pattern x read fraction x window
        double bandwidth;    // B/ns per PC, refresh as configured
        double latency;      // mean read latency, arrival -> last byte (0: no reads)
    };
    struct Row {             // one request size
        uint64_t bytes = 0;
        double cold_read = 0;     // one read on a cold PC: arrival -> last data byte
        double cold_write = 0;    // one write: arrival -> acknowledged (banked: posted, 0)
        // [pattern][read fraction][window]
        std::array<std::array<std::array<Point, kWindows.size()>, kReadFractions.size()>, 2> points{};
        // [pattern][read fraction]: the sustained rate with refresh off (the flow mode puts an
        // all-bank refresh in as an outage of its own, tREFI apart)
        std::array<std::array<double, kReadFractions.size()>, 2> unrefreshed{};
        // [read fraction][streams]: sequential streams sharing the PC, with refresh as configured
        // and off (the first column: one stream, the sustained rate above)
        std::array<std::array<double, kStreams.size()>, kReadFractions.size()> streams{}, streams_unrefreshed{};
    };

    // Runs the banked model over every load of the table (about 0.1 s).
    static FlowTable calibrate(const HbmConfig& hbm);
    static FlowTable from_json(const nlohmann::json& j);  // throws std::runtime_error
    nlohmann::json to_json() const;

    const std::string& hash() const { return hash_; }
    double peak() const { return peak_; }  // B/ns: hbm.pc_bandwidth
    // Sustained bytes per ns of one PC serving requests of `bytes` (interpolated between the sizes
    // tabulated, log scale), `write` or read, with refresh in (false: the rate between refreshes).
    double sustained(uint64_t bytes, PcPattern pattern, bool write, bool with_refresh) const;
    double cold_latency(uint64_t bytes, bool write) const;
    // What `streams` sequential streams sharing one PC get of it together, as a fraction of what
    // one stream gets (<= 1 where they reopen each other's rows; interpolated in log2(streams),
    // the last column beyond it).
    double shared_fraction(uint64_t bytes, bool write, uint32_t streams, bool with_refresh) const;
    const std::vector<Row>& rows() const { return rows_; }

private:
    template <class F> double interpolate(uint64_t bytes, F value) const;
    std::string hash_, provenance_;
    nlohmann::json hbm_;  // the effective section it was made from
    double peak_ = 0;
    std::vector<Row> rows_;  // by size, ascending powers of two up to hbm.interleave
};

// FNV-1a over the effective `hbm` section (the field list's values): the table's name.
std::string hbm_hash(const HbmConfig& hbm);
nlohmann::json hbm_json(const HbmConfig& hbm);

} // namespace nctlm::flow
