// nctlm::bind(initiator_socket, target_socket, parent, name): binds two sockets; in a build with
// NCTLM_PROTOCOL_CHECK (CMake option) a ProtocolChecker is inserted between them, so every
// transaction on every binding is checked against the TLM-2.0 base protocol.
#pragma once

#include "models/checker/protocol_checker.h"

#include <string>

namespace nctlm {

#ifdef NCTLM_PROTOCOL_CHECK
constexpr bool kProtocolCheck = true;
#else
constexpr bool kProtocolCheck = false;
#endif

template <class Initiator, class Target> void bind(Initiator& from, Target& to, const std::string& name) {
    if constexpr (kProtocolCheck) {
        // Owned by the SystemC hierarchy for the whole run; reachable through ProtocolChecker::all().
        auto* checker = new ProtocolChecker(("check_" + name).c_str());
        from.bind(checker->target);
        checker->initiator.bind(to);
    } else {
        from.bind(to);
    }
}

} // namespace nctlm
