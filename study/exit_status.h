// Exit status of every nctlm command, the sweep and the studies alike (docs/errors.md).
#pragma once

namespace nctlm {

constexpr int kExitOk = 0;           // done; every point ok
constexpr int kExitInternal = 1;     // a bug or an environment failure (disk, fork)
constexpr int kExitUsage = 2;        // bad configuration, spec or command line: nothing ran
constexpr int kExitFailed = 3;       // a simulation error; in a sweep, some point failed or is missing
constexpr int kExitInterrupted = 130;  // SIGINT/SIGTERM: rows kept, continue with --resume

} // namespace nctlm
