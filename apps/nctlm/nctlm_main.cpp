// The `nctlm` executable: the CLI with the built-in testbenches.
#include "apps/nctlm/cli.h"

#include <systemc>  // declares sc_main extern "C", as libsystemc's main expects

int sc_main(int argc, char** argv) { return nctlm::cli_main(argc, argv); }
