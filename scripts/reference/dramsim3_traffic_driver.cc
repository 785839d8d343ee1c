// The closed-loop driver behind tests/data/dramsim3_hbm2e.json: DRAMsim3 (a reference nobody here
// wrote) driven by the same traffic as nctlm's `traffic` testbench. Not part of the build: it links
// a DRAMsim3 built in a scratch folder outside the project (docs/validation/hbm.md gives the commit,
// the ini and the commands):
//   g++ -O2 -std=c++17 -I$DS3/src -I$DS3/ext/headers dramsim3_traffic_driver.cc
//       -L$DS3 -ldramsim3 -Wl,-rpath,$DS3 -o traffic_driver   ($DS3: the DRAMsim3 checkout)
//   traffic_driver --config hbm2e_pc.ini --pattern random --request-bytes 2048 --read-fraction 1.0
//       --window 256 --warmup-ns 10000 --duration-ns 110000 --seed 1 [--front-end per_pc|single]
// Requests come from the same generator as nctlm's TrafficSource (std::mt19937_64, R-aligned over a
// 16 GiB stack, a write with probability 1 - read_fraction); each is cut into 32 B accesses whose
// addresses nctlm's trn1 map decodes (pc_hash fold) and which are re-encoded for `rorabachbgco`.
// Front ends: per_pc (the table's) hands each PC's accesses over in order as WillAcceptTransaction
// allows, so a full PC holds back only its own requests; single is one in-order port that retries a
// refused head, as DRAMsim3's own RandomCPU/TraceBasedCPU do (head-of-line blocking).
#include "memory_system.h"

#include <algorithm>
#include <cstdio>
#include <deque>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace {

struct Request {
    bool write;
    uint64_t generated, last;  // DRAMsim3 cycles
    uint32_t accesses_left;
    uint64_t offset;
};

uint64_t fold_pc(uint64_t chunk) {  // nctlm's pc_hash: fold over 16 PCs
    uint64_t sum = 0;
    for (; chunk; chunk /= 16)
        sum += chunk % 16;
    return sum % 16;
}

// nctlm trn1 stack offset: 0-4 byte, 5-9 column, 10 and 15 bank group, 11-14 PC chunk (2 KiB), 16-17 bank, 18+ row.
uint64_t dramsim3_address(uint64_t offset) {
    uint64_t column = (offset >> 5) & 31, group = ((offset >> 10) & 1) | (((offset >> 15) & 1) << 1),
             pc = fold_pc(offset >> 11), bank = (offset >> 16) & 3, row = offset >> 18;
    return row << 18 | bank << 16 | pc << 12 | group << 10 | column << 5;
}

} // namespace

int main(int argc, char** argv) {
    std::string config = "hbm2e_pc.ini", pattern = "random", front_end = "per_pc";
    std::string out_dir = "/tmp/dramsim3_driver_" + std::to_string(getpid()) + "/";
    uint64_t request_bytes = 2048, window = 16, seed = 1;
    double read_fraction = 1, warmup_ns = 10000, duration_ns = 110000;
    for (int i = 1; i + 1 < argc; i += 2) {
        std::string k = argv[i], v = argv[i + 1];
        if (k == "--config") config = v;
        else if (k == "--pattern") pattern = v;
        else if (k == "--front-end") front_end = v;
        else if (k == "--request-bytes") request_bytes = std::stoull(v);
        else if (k == "--window") window = std::stoull(v);
        else if (k == "--seed") seed = std::stoull(v);
        else if (k == "--read-fraction") read_fraction = std::stod(v);
        else if (k == "--warmup-ns") warmup_ns = std::stod(v);
        else if (k == "--duration-ns") duration_ns = std::stod(v);
        else {
            std::fprintf(stderr, "unknown option %s\n", k.c_str());
            return 2;
        }
    }
    const uint64_t slots = (16ull << 30) / request_bytes, accesses = request_bytes / 32;
    std::mt19937_64 rng(seed);
    uint64_t sequence = 0, clk = 0, outstanding = 0, finished = 0, bytes = 0, read_bytes = 0;
    bool stats_reset = false;
    std::vector<Request> requests;
    std::vector<uint64_t> free_ids;
    std::map<uint64_t, std::deque<uint64_t>> in_flight;                  // address -> request ids, oldest first
    std::vector<std::deque<std::pair<uint64_t, uint64_t>>> per_pc(16);   // (address, id) not yet handed over
    std::deque<uint64_t> port;                                           // single: requests in order
    uint64_t port_next = 0;                                              // single: head's next byte
    std::vector<double> latencies;
    double tck = 0;

    auto complete = [&](uint64_t address) {
        auto& ids = in_flight[address];
        uint64_t id = ids.front();
        ids.pop_front();
        if (ids.empty())
            in_flight.erase(address);
        Request& r = requests[id];
        r.last = clk;
        if (--r.accesses_left)
            return;
        double t = clk * tck;
        if (t >= warmup_ns && t <= duration_ns) {
            ++finished;
            bytes += request_bytes;
            if (!r.write) {
                read_bytes += request_bytes;
                latencies.push_back((r.last - r.generated) * tck);
            }
        }
        --outstanding;
        free_ids.push_back(id);
    };
    mkdir(out_dir.c_str(), 0755);
    dramsim3::MemorySystem memory(config, out_dir, complete, complete);
    tck = memory.GetTCK();

    auto generate = [&] {  // closed loop: refill the window at once
        while (outstanding < window && clk * tck < duration_ns) {
            uint64_t offset = (pattern == "sequential" ? sequence++ % slots : rng() % slots) * request_bytes;
            bool write = read_fraction < 1 && std::generate_canonical<double, 53>(rng) >= read_fraction;
            uint64_t id;
            if (free_ids.empty()) {
                id = requests.size();
                requests.emplace_back();
            } else {
                id = free_ids.back();
                free_ids.pop_back();
            }
            requests[id] = {write, clk, 0, uint32_t(accesses), offset};
            ++outstanding;
            if (front_end == "per_pc") {
                for (uint64_t b = 0; b < request_bytes; b += 32) {
                    uint64_t a = dramsim3_address(offset + b);
                    per_pc[(a >> 12) & 15].push_back({a, id});
                }
            } else {
                port.push_back(id);
            }
        }
    };
    auto hand_over = [&](uint64_t address, uint64_t id) {
        in_flight[address].push_back(id);
        memory.AddTransaction(address, requests[id].write);
    };

    while ((clk * tck < duration_ns || outstanding) && clk * tck < duration_ns + 100000) {
        if (!stats_reset && clk * tck >= warmup_ns) {
            memory.ResetStats();
            stats_reset = true;
        }
        memory.ClockTick();
        generate();
        if (front_end == "per_pc") {
            for (auto& q : per_pc)
                while (!q.empty() && memory.WillAcceptTransaction(q.front().first, requests[q.front().second].write)) {
                    hand_over(q.front().first, q.front().second);
                    q.pop_front();
                }
        } else {
            while (!port.empty()) {
                uint64_t id = port.front(), a = dramsim3_address(requests[id].offset + port_next);
                if (!memory.WillAcceptTransaction(a, requests[id].write))
                    break;  // head-of-line: everything behind waits
                hand_over(a, id);
                port_next += 32;
                if (port_next == request_bytes) {
                    port_next = 0;
                    port.pop_front();
                }
            }
        }
        ++clk;
    }

    memory.PrintStats();  // the measured window's command counts (reset at warm-up)
    double activates = 0, columns = 0, refreshes = 0;
    std::ifstream stats(out_dir + "dramsim3.txt");
    for (std::string line; std::getline(stats, line);) {
        std::istringstream fields(line);
        std::string key, eq;
        double value;
        if (!(fields >> key >> eq >> value))
            continue;
        if (key == "num_act_cmds") activates += value;
        else if (key == "num_read_cmds" || key == "num_write_cmds") columns += value;
        else if (key == "num_ref_cmds") refreshes += value;
    }
    std::sort(latencies.begin(), latencies.end());
    double mean = 0;
    for (double x : latencies)
        mean += x;
    mean /= std::max<size_t>(1, latencies.size());
    auto percentile = [&](double p) {
        return latencies.empty() ? 0.0 : latencies[std::min(latencies.size() - 1, size_t(p * latencies.size()))];
    };
    const double window_ns = duration_ns - warmup_ns;
    std::printf("{\"bandwidth_gbs\": %.3f, \"read_bandwidth_gbs\": %.3f, \"write_bandwidth_gbs\": %.3f, "
                "\"row_hit_rate\": %.4f, \"refreshes\": %.0f, \"requests\": %lu, \"read_latency_ns\": "
                "{\"mean\": %.3f, \"p50\": %.3f, \"p99\": %.3f, \"max\": %.3f}}\n",
                bytes / window_ns, read_bytes / window_ns, (bytes - read_bytes) / window_ns,
                columns ? 1 - activates / columns : 0, refreshes, (unsigned long)finished, mean, percentile(0.5),
                percentile(0.99), latencies.empty() ? 0 : latencies.back());
}
