// One HBM stack's controller. It alone serializes the HBM: each pseudo-channel keeps
// `available_at`; a burst starts at max(arrival + controller_latency, available_at[pc]) and
// occupies the PC for bytes ÷ pc_bandwidth. Requests to one PC keep their arrival order.
#pragma once

#include "models/common/bandwidth_pipe.h"
#include "models/common/peq.h"
#include "models/common/stats.h"
#include "models/hbm/address_map.h"
#include "models/hbm/hbm_config.h"
#include "models/hbm/sparse_memory.h"

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_target_socket.h>
#include <vector>

namespace nctlm {

class HbmController : public sc_core::sc_module {
public:
    tlm_utils::simple_target_socket<HbmController> socket;

    HbmController(sc_core::sc_module_name name, const HbmConfig& cfg, const AddressMap& map, uint32_t stack);

    const SparseMemory& memory() const { return memory_; }
    // Seeds memory without simulated time (test set-up, workload images).
    void preload(uint64_t stack_offset, const unsigned char* data, uint64_t length);

private:
    struct PseudoChannel {
        BandwidthPipe pipe;
        Histogram* wait_ns;  // time a burst waited for its PC (serialization)
        int track;
    };
    tlm::tlm_sync_enum nb_transport_fw(tlm::tlm_generic_payload& p, tlm::tlm_phase& phase, sc_core::sc_time& delay);
    void send_response(tlm::tlm_generic_payload& p, const tlm::tlm_phase& phase);
    void end_of_simulation() override;

    HbmConfig cfg_;
    const AddressMap& map_;
    uint32_t stack_;
    std::vector<PseudoChannel> pcs_;
    SparseMemory memory_;
    Peq<HbmController> resp_peq_;
    Counter &bytes_read_, &bytes_written_, &bursts_;
};

} // namespace nctlm
