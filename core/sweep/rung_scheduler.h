// Early stopping of a sweep's trials: successive halving at rungs, as ASHA (Li et al.,
// arXiv 1810.05934) and Hyperband (Li et al., arXiv 1603.06560) do it.
//
// A bracket's rungs are epochs min_epochs, min_epochs·η, min_epochs·η², … below max_epochs; the
// trials that are promoted past the last rung train to max_epochs. At each rung the best
// ⌊n/η⌋ (at least one) of the n trials that reached it are promoted; the others stop there and
// keep their folders. A promoted trial resumes its own checkpoint (every trial is trained with
// train.epochs = max_epochs and paused at its rung, so the learning-rate schedule is the full
// run's and the promoted trial continues as if it had never stopped).
//
// The decisions are a pure function of what the trials' own files say (epochs done, the metric
// per epoch, failures): a sweep stopped at any moment and started again, locally or as a new
// Slurm job, takes the same decisions and repeats no finished work. A rung is decided once
// every trial of its bracket has reached it (or failed), so the choices do not depend on which
// trial happened to finish first — the same on 1 job, on N jobs and on a cluster.
//
// Hyperband runs several brackets side by side: bracket s starts at rung s (min_epochs·η^s), so
// bracket 0 stops the most trials earliest and the last bracket the fewest; the trials are
// dealt to the brackets in Hyperband's proportions n_s ∝ η^s'/(s'+1), s' the bracket's halvings.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "config/choices.h"

namespace plugtrain {

struct RungSchedule {
  SweepScheduler kind = SweepScheduler::none;
  std::int64_t min_epochs = 1;
  std::int64_t max_epochs = 0;       // train.epochs of every trial
  std::int64_t reduction_factor = 3;  // η
  std::int64_t brackets = 1;          // hyperband; 1 for asha
  std::string metric = "test_accuracy";  // a monitor name of the trials' task (task/task.h)
  bool maximise = true;

  // Bracket b's milestones: its rungs, then max_epochs.
  std::vector<std::int64_t> milestones(std::int64_t bracket) const;
  // The bracket of each of `trials` trials (all 0 for asha).
  std::vector<std::int64_t> bracket_of_trials(std::size_t trials) const;
};

// What a trial's files say.
struct TrialProgress {
  std::int64_t epochs_done = 0;
  std::map<std::int64_t, double> metric;  // epoch -> the scheduled metric (NaN when diverged)
  bool failed = false;  // its last attempt failed: it is out of the ranking
  bool ended = false;   // its run ended for good before max_epochs (its own early stopping)
};

enum class TrialVerdict {
  run,       // train until `until_epoch`, then pause (or end, at max_epochs)
  waiting,   // reached its rung; the rung is decided when the bracket's other trials reach it
  stopped,   // not promoted at `rung`: stays where it stopped
  complete,  // trained to max_epochs (or ended by its own early stopping)
  failed
};

struct TrialDecision {
  TrialVerdict verdict = TrialVerdict::run;
  std::int64_t until_epoch = 0;  // run: where to pause (max_epochs: to the end)
  std::int64_t bracket = 0;
  std::int64_t rung = 0;         // the rung it is at or stopped at (0-based)
  std::int64_t rung_epoch = 0;   // that rung's epoch
};

// A metric at a rung's epoch: its value there, or at the last evaluated epoch before it;
// nullopt when it has none (it then ranks last, with the NaN of a diverged run).
std::optional<double> metric_at_rung(const std::map<std::int64_t, double>& values, std::int64_t epoch);

// Every trial's next step. progress[i] is trial i's; the result is in the same order.
std::vector<TrialDecision> decide_rungs(const RungSchedule& schedule, const std::vector<TrialProgress>& progress);

// Epochs a full grid would train (trials × max_epochs), for the report's comparison.
std::int64_t full_grid_epochs(const RungSchedule& schedule, std::size_t trials);

}  // namespace plugtrain
