// The SBUF/PSUM partition ports kept as runs of partitions (PartitionPorts: an access costs the
// runs it meets, not the partitions it covers), held to one port per partition on random accesses.
#include "models/pe/partition_ports.h"
#include "tests/xorshift.h"

#include <gtest/gtest.h>

using namespace nctlm;

TEST(PartitionPorts, PartitionPortsAsRunsReserveAsOnePortPerPartition) {
    test::XorShift64 rng{0xa11ce};
    for (int config = 0; config < 200; ++config) {
        uint32_t partitions = 1 + uint32_t(rng() % 160);
        double ns_per_byte = 0.001 * double(1 + rng() % 1000);
        PartitionPorts ports(partitions, ns_per_byte);
        std::vector<double> free_at(partitions, 0.0);  // the plain model: one port per partition
        double busy = 0, now = 0;
        for (int access = 0; access < 300; ++access) {
            now += double(rng() % 50) * 0.37;
            uint32_t first = uint32_t(rng() % partitions);
            uint32_t count = rng() % 3 == 0 ? partitions - first : uint32_t(rng() % (partitions - first + 1));
            if (rng() % 4 == 0) {  // whole, the common case
                first = 0;
                count = partitions;
            }
            double bytes = double(rng() % 4096) / double(1 + rng() % 7);
            double start = now;
            for (uint32_t p = first; p < first + count; ++p)
                start = std::max(start, free_at[p]);
            double end = start + bytes * ns_per_byte;
            for (uint32_t p = first; p < first + count; ++p)
                free_at[p] = end;
            busy += end - start;
            ASSERT_EQ(ports.reserve(now, first, count, bytes), end) << config << " " << access;
            for (uint32_t p = 0; p < partitions; ++p)
                ASSERT_EQ(ports.free_at(p), free_at[p]) << "partition " << p << " after access " << access;
        }
        EXPECT_EQ(ports.busy_ns(), busy);
    }
}
