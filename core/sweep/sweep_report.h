// The table a paper needs from a set of runs: one row per run (what varied, best and final
// test metric and loss, epochs, time, samples/s) and one row per group — the runs that differ
// only in their seed — with n, mean ± sample std, best first by the mean final test metric, and
// Welch's t-test p-value of each group against the best. The metric is the runs' task's
// headline (accuracy, mAP, MAE, mIoU, CER), better in its own direction. Written as sweep.md,
// sweep.csv and sweep.svg (the test metric against epoch, mean ± std per group), and
// TensorBoard hparams.
#pragma once

#include <filesystem>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "sweep/run_records.h"

namespace plugtrain {

struct MeanStd {
  double mean = 0, std = 0;  // sample std (n - 1); 0 for one value
};
MeanStd mean_std(const std::vector<double>& values);

// Two-sided p-value of Welch's t-test; nullopt when either side has fewer than 2 values or
// both have no spread.
std::optional<double> welch_p_value(const std::vector<double>& a, const std::vector<double>& b);

struct RunGroup {
  std::string label;  // the varied keys other than the seed, "optim.name=sgd, data.label_noise=0.2"
  std::vector<const RunRecord*> runs;
  MeanStd best_metric, final_metric, seconds_per_epoch, samples_per_second;
  MeanStd selected_metric;  // the final headline on the selection split (validation, else test): the ranking's key
  std::optional<double> p_value;  // final test metric against the best group
};

struct SweepReport {
  std::vector<RunRecord> runs;
  std::vector<std::string> varied;  // keys that differ between runs
  std::vector<RunGroup> groups;     // best first
  std::string metric = "accuracy";  // the headline metric of the runs (the first run's when they differ)
  bool higher_is_better = true;
};

SweepReport build_report(const std::filesystem::path& root);

// Prints the report and writes sweep.md, sweep.csv, sweep.svg into `folder`, and the
// TensorBoard hparams of every run.
void write_report(const SweepReport& report, const std::filesystem::path& folder, std::ostream& out);

}  // namespace plugtrain
