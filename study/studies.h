// `nctlm sensitivity` and `nctlm uncertainty`: error bars for one run (docs/sensitivity.md).
// Both run their points through the sweep engine (study_run.h) and do the arithmetic of
// study_math.h on the rows; each writes NAME.json, NAME.csv and its plots into the output
// directory and prints a markdown table on stdout.
#pragma once

#include "study/study_run.h"

#include <cstdint>

namespace nctlm::study {

struct SensitivityOptions {
    double step_pct = 10;   // +-step, in percent
    bool use_range = false; // calibrated/assumed parameters to the ends of their plausible range
    size_t top = 12;        // rows per figure on stdout
};
// Exit status as the sweep's (study/exit_status.h).
int run_sensitivity(const StudyRun& run, const SensitivityOptions& options);

struct UncertaintyOptions {
    size_t samples = 32;
    uint64_t seed = 1;
};
int run_uncertainty(const StudyRun& run, const UncertaintyOptions& options);

} // namespace nctlm::study
