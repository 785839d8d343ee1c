// Our executables' main: silences the SystemC banner (printed before sc_main unless this
// variable is set), then runs sc_main as libsystemc's own main would.
#include <cstdlib>
#include <systemc>

int main(int argc, char** argv) {
    setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);
    return sc_core::sc_elab_and_sim(argc, argv);
}
