// The finished (or interrupted) runs under a folder, read back from what each run wrote:
// summary.json, the resolved experiment.toml and metrics.csv. A sweep's report and
// `plugtrain report` are built from these alone, so they can be rebuilt at any time.
#pragma once

#include <filesystem>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace plugtrain {

struct RunRecord {
  std::filesystem::path folder;                 // .../version_N
  std::map<std::string, std::string> settings;  // resolved experiment: key path -> TOML text
  bool interrupted = false;                     // it has not finished yet
  bool paused = false;                          // stopped where it was asked to (a sweep's rung)
  std::string metric = "accuracy";  // the task's headline metric (summary.json "metric")
  bool higher_is_better = true;     // its direction
  // The split that selected (summary.json "selection_split"): "val" with a validation split.
  std::string selection_split = "test";
  bool test_is_val = false;  // its "final test" figures are on that val split (no test labels)
  double best_selected_metric = 0;   // the headline's best on that split
  double final_selected_metric = 0;  // and its last value there (the ranking's key)
  double final_test_metric = 0, final_test_loss = 0;
  // A language model's bits per UTF-8 byte (summary.json's final_test.bits_per_byte; NaN for
  // other tasks): the figure that compares runs of different vocabularies, whatever the headline.
  double final_test_bits_per_byte = std::numeric_limits<double>::quiet_NaN();
  double best_test_loss = 0;       // the lowest of its evaluated epochs
  std::int64_t epochs = 0;         // epochs done (metrics.csv, over every resume)
  double seconds = 0;              // all its epochs, evaluation included
  double seconds_per_epoch = 0;    // mean over its epochs
  double samples_per_second = 0;   // mean over its epochs
  std::vector<std::pair<std::int64_t, double>> test_metric;  // (epoch, test headline metric) curve
};

// metrics.csv's epoch rows, by epoch, split into cells (kind,epoch,step,loss,<headline>,test_loss,
// test_<headline>,lr,samples_per_second,seconds). After a kill and a resume an epoch can appear
// twice: the later row stands. A row cut short (a run being written) is left out.
std::map<std::int64_t, std::vector<std::string>> metrics_epoch_rows(const std::filesystem::path& csv);

// The monitor name of each of metrics.csv's columns, from its header: "loss" is train_loss and
// the training headline's column gets its train_ prefix (kind, epoch, step, train_loss,
// train_accuracy, test_loss, test_accuracy, lr, samples_per_second, seconds, test_top5_accuracy).
std::vector<std::string> metrics_columns(const std::filesystem::path& csv);

// Every run folder (version_N) below `root` that holds a summary.json. Sorted by path. Figures a
// diverged run left as null read as NaN.
std::vector<RunRecord> read_run_records(const std::filesystem::path& root);

// The keys whose values differ between the runs (what was varied), in schema order, leaving
// out where each run wrote (experiment.name, experiment.output).
std::vector<std::string> varied_keys(const std::vector<RunRecord>& runs);

}  // namespace plugtrain
