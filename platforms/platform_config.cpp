#include "platforms/platform_config.h"

#include <algorithm>

namespace nctlm {

const FieldList<ChipConfig>& ChipConfig::fields() {
    using C = ChipConfig;
    static const FieldList<C> f = {
        text("name", &C::name, nullptr, "platform name, echoed in results")
            .setting("a label"),
        count("tiles", &C::tiles, nullptr, 1, 256, "NeuronCore tiles on the chip (trn1: 2, trn2: 8)")
            .documented("Trainium Architecture page (two NeuronCore-v2); Trainium2 Architecture page (eight "
                        "NeuronCore-v3)"),
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
    if (c.dma.queue_channels > c.dma.channels)
        fail("dma", "queue_channels", "dma.queue_channels cannot exceed dma.channels");
    return c;
}

const std::vector<std::string>& PlatformConfig::sections() {
    static const std::vector<std::string> s = {"platform", "dma", "noc", "hbm", "pe", "host", "sim", "testbench", "workload", "kernel"};
    return s;
}

std::vector<FieldInfo> PlatformConfig::field_infos() {
    std::vector<FieldInfo> all;
    for (auto part : {nctlm::field_infos<ChipConfig>("platform"), nctlm::field_infos<DmaConfig>("dma"),
                      nctlm::field_infos<NocConfig>("noc"), nctlm::field_infos<HbmConfig>("hbm"),
                      nctlm::field_infos<PeConfig>("pe"), nctlm::field_infos<HostConfig>("host"),
                      nctlm::field_infos<SimConfig>("sim")})
        all.insert(all.end(), part.begin(), part.end());
    return all;
}

} // namespace nctlm
