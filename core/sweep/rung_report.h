// What a sweep's rung scheduler decided, read back from the trials' files at any time: the rungs
// of each bracket with how many trials reached them and went on, each trial's verdict, and the
// epochs trained against what the full grid would have trained. Printed at the end of an ASHA
// or Hyperband sweep, by `plugtrain report` and `plugtrain sweep --status`, and kept in sweep.md.
#pragma once

#include <filesystem>
#include <iosfwd>
#include <string>
#include <vector>

#include "sweep/rung_scheduler.h"
#include "sweep/trial_files.h"

namespace plugtrain {

// "asha on test_accuracy (max): rungs at epochs 1, 3, then 9; reduction factor 3"
std::string schedule_line(const RungSchedule& schedule);

// A trial's verdict for a person: "stopped at rung 1 (epoch 1, test_accuracy 0.7812)".
std::string verdict_text(const RungSchedule& schedule, const TrialDecision& decision, const TrialFiles& files);

// Prints the rung report of the sweep in `sweep_folder` (one with a trials.json and a scheduler)
// and appends it to its sweep.md when there is one. Does nothing for a sweep without a scheduler.
void write_rung_report(const std::filesystem::path& sweep_folder, std::ostream& out);

}  // namespace plugtrain
