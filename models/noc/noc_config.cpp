#include "models/noc/noc_config.h"

namespace nctlm {

const FieldList<NocConfig>& NocConfig::fields() {
    using C = NocConfig;
    static const FieldList<C> f = {
        frequency("clock", &C::clock, nullptr, "NoC clock (not published for Trainium; assumed)")
            .assumed("x0.5..x1.5", "no public NoC figure"),
        count("hop_cycles", &C::hop_cycles, nullptr, 0, 1000,
              "cycles per link traversed, router pipeline + wire (assumed; no public figure)")
            .assumed("4..20", "2..10 ns per link at 2 GHz; no public figure"),
        bandwidth("link_bandwidth", &C::link_bandwidth, nullptr,
                  "tile<->router and router<->stack link, per direction; must exceed a stack's HBM rate")
            .assumed("x0.75..x2", "no public figure; above a stack's HBM rate"),
        bandwidth("ring_bandwidth", &C::ring_bandwidth, nullptr,
                  "router<->router ring link, per direction; shared by remote traffic")
            .assumed("x0.5..x2", "no public figure"),
        bytes("request_bytes", &C::request_bytes, "64 B", 1, 4096, "request / write-ack header flit")
            .assumed("32 B..128 B", "one header flit"),
        count("port_buffer", &C::port_buffer, "64", 1, 1 << 20,
              "credits per stack port: requests the NoC holds toward one stack (in flight plus waiting for the "
              "controller); a tile's request waits for END_REQ when none is free (assumed: covers the "
              "bandwidth-delay product of a route)")
            .assumed("16..256", "no public figure; covers a route's bandwidth-delay product"),
    };
    return f;
}

} // namespace nctlm
