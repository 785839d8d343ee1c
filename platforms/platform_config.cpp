#include "platforms/platform_config.h"

#include <algorithm>

namespace nctlm {

namespace {
// sim.timing: flow refuses NoC ports with this many credits or fewer: AT's bandwidth is then bound by
// credits over the route's round trip, which the flow leaves out (docs/performance.md, "What flow refuses").
constexpr uint32_t kFlowMinPortBuffer = 8;
} // namespace

const FieldList<ChipConfig>& ChipConfig::fields() {
    using C = ChipConfig;
    static const FieldList<C> f = {
        text("name", &C::name, nullptr, "platform name, echoed in results")
            .setting("a label"),
        count("tiles", &C::tiles, nullptr, 1, 256, "NeuronCore tiles on the chip (trn1: 2, trn2: 8)")
            .documented("Trainium Architecture page (two NeuronCore-v2); Trainium2 Architecture page (eight "
                        "NeuronCore-v3)"),
        count("chips", &C::chips, "1", 1, 64,
              "chips joined by NeuronLink (link section); 1: a single chip, no links")
            .setting("the platform's size: trn1.32xlarge and trn2.48xlarge have 16 chips (instance architecture "
                     "pages); configs/platforms/trn1-16.yaml, trn2-16.yaml"),
        count("chip_address_bit", &C::chip_address_bit, "44", 20, 62,
              "chip c's memory is at c << chip_address_bit plus its local address, from every chip (memory pooling "
              "over NeuronLink); chip 0's addresses are the local ones")
            .setting("an address-map layout: 44 leaves 16 TiB per chip, above the 1 TiB + HBM of the "
                     "stack-interleaved window"),
    };
    return f;
}

PlatformConfig PlatformConfig::load(const ConfigTree& tree) {
    // A misspelt section ("hmb:") would surface as a missing key of the real one with no location:
    // name the typo where it is written instead.
    for (auto it = tree.root().begin(); it != tree.root().end(); ++it) {
        std::string section = it->first.Scalar();
        if (std::find(sections().begin(), sections().end(), section) != sections().end())
            continue;
        std::string hint = did_you_mean(section, sections());
        if (!hint.empty() && !tree.root()[hint])
            throw ConfigError(tree.where(section, "") + ": unknown section '" + section + "'; did you mean '" + hint +
                              "'?");
    }
    PlatformConfig c;
    c.platform = tree.load<ChipConfig>("platform");
    c.dma = tree.load<DmaConfig>("dma");
    c.noc = tree.load<NocConfig>("noc");
    c.hbm = tree.load<HbmConfig>("hbm");
    c.link = tree.load<LinkConfig>("link");
    c.pe = tree.load<PeConfig>("pe");
    c.host = tree.load<HostConfig>("host");
    c.sim = tree.load<SimConfig>("sim");
    auto fail = [&](const std::string& section, const std::string& key, const std::string& msg) {
        throw ConfigError(tree.blame(section, key, msg) + ": " + msg);
    };
    if (c.hbm.interleave % c.dma.burst_size != 0)
        fail("dma", "burst_size",
             "dma.burst_size (" + format_bytes(c.dma.burst_size) + ") must divide hbm.interleave (" +
                 format_bytes(c.hbm.interleave) + ") so that every burst maps to one pseudo-channel");
    if (c.hbm.stack_capacity % c.hbm.interleave != 0)
        fail("hbm", "interleave", "hbm.interleave must divide hbm.stack_capacity");
    if (c.hbm.stack_interleave % c.hbm.interleave != 0 && c.hbm.interleave % c.hbm.stack_interleave != 0)
        fail("hbm", "stack_interleave", "hbm.stack_interleave and hbm.interleave must divide one another");
    if (c.hbm.interleaved_base != 0 && c.hbm.interleaved_base < c.hbm.stack_capacity * c.hbm.stacks)
        fail("hbm", "interleaved_base", "hbm.interleaved_base overlaps the contiguous window (" +
                                            format_bytes(c.hbm.stack_capacity * c.hbm.stacks) + ")");
    if (auto problem = check_hbm(c.hbm))
        fail("hbm", problem->key, problem->message);
    uint64_t local_top = std::max(c.hbm.stack_capacity * c.hbm.stacks,
                                  c.hbm.interleaved_base ? c.hbm.interleaved_base + c.hbm.stack_capacity * c.hbm.stacks : 0);
    if (local_top > (uint64_t(1) << c.platform.chip_address_bit))
        fail("platform", "chip_address_bit",
             "platform.chip_address_bit (" + std::to_string(c.platform.chip_address_bit) + ") is below a chip's own "
                 "addresses (they reach " + format_bytes(local_top) + ")");
    if ((uint64_t(c.platform.chips - 1) >> (63 - c.platform.chip_address_bit)) != 0)
        fail("platform", "chip_address_bit", "platform.chips << platform.chip_address_bit does not fit 64 bits");
    if (c.platform.chips > 1 && c.link.topology == ChipTopologyKind::Torus && c.platform.chips % c.link.torus_width != 0)
        fail("link", "torus_width",
             "link.torus_width (" + std::to_string(c.link.torus_width) + ") must divide platform.chips (" +
                 std::to_string(c.platform.chips) + "): the torus has chips / torus_width rows");
    if (c.dma.queue_channels > c.dma.channels)
        fail("dma", "queue_channels", "dma.queue_channels cannot exceed dma.channels");
    if (c.sim.timing == TimingMode::Flow && c.noc.port_buffer <= kFlowMinPortBuffer)
        fail("noc", "port_buffer",
             "sim.timing: flow does not model the NoC's credits; with noc.port_buffer " +
                 std::to_string(c.noc.port_buffer) + " (at most " + std::to_string(kFlowMinPortBuffer) +
                 ") they bound AT's bandwidth by the route's round trip (flow was off by up to 89 %); "
                 "run it with --timing at or lt");
    if (c.sim.timing == TimingMode::Flow && c.hbm.ingress_queue == 0)  // docs/performance.md, "What flow refuses"
        fail("hbm", "ingress_queue",
             "sim.timing: flow does not model the controller's head-of-line blocking; with hbm.ingress_queue 0 a "
             "request waiting for room in its PC queue holds the port for every other PC, which bounds AT's "
             "bandwidth (flow was off by up to 86 %); run it with --timing at or lt");
    return c;
}

const std::vector<std::string>& PlatformConfig::sections() {
    static const std::vector<std::string> s = {"platform", "dma", "noc", "hbm", "link", "pe", "host", "sim", "testbench", "workload", "kernel"};
    return s;
}

std::vector<FieldInfo> PlatformConfig::field_infos() {
    std::vector<FieldInfo> all;
    for (auto part : {nctlm::field_infos<ChipConfig>("platform"), nctlm::field_infos<DmaConfig>("dma"),
                      nctlm::field_infos<NocConfig>("noc"), nctlm::field_infos<HbmConfig>("hbm"),
                      nctlm::field_infos<LinkConfig>("link"),
                      nctlm::field_infos<PeConfig>("pe"), nctlm::field_infos<HostConfig>("host"),
                      nctlm::field_infos<SimConfig>("sim")})
        all.insert(all.end(), part.begin(), part.end());
    return all;
}

} // namespace nctlm
