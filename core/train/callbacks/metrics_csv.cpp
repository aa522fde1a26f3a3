#include "train/callbacks/metrics_csv.h"

#include <cerrno>
#include <cstring>
#include <sstream>

#include "util/atomic_file.h"
#include "util/error.h"

namespace plugtrain {

namespace {

// Whether a row of metrics.csv was written at or before the checkpoint's place.
bool before_checkpoint(const std::string& row, const LoopState& resumed) {
  std::istringstream fields(row);
  std::string kind, epoch, step;
  std::getline(fields, kind, ',');
  std::getline(fields, epoch, ',');
  std::getline(fields, step, ',');
  try {
    if (kind == "epoch") return std::stoll(epoch) <= resumed.epochs_done;
    if (kind == "step") return std::stoll(step) <= resumed.step;
  } catch (const std::logic_error&) {  // std::stoll on a row cut short by a crash: not a row to keep
  }
  return false;  // a cut row
}

// Significant digits of every figure: 9 write a float32 loss exactly (std::numeric_limits<float>::
// max_digits10), so two runs' step losses compare to the last bit (the stream's 6 would round
// them to ~1e-6).
constexpr int kDigits = 9;

// A metric's cell: empty when the epoch did not measure it.
std::string cell(const std::vector<MetricValue>& values, std::size_t i) {
  if (i >= values.size()) return "";
  std::ostringstream text;
  text.precision(kDigits);
  text << values[i].value;
  return text.str();
}

}  // namespace

MetricsCsv::MetricsCsv(const std::filesystem::path& path, std::vector<TaskMetric> training,
                       std::vector<TaskMetric> evaluation, bool with_val)
    : path_(path), training_(std::move(training)), evaluation_(std::move(evaluation)), with_val_(with_val) {}

std::string MetricsCsv::header() const {
  std::string h = "kind,epoch,step,loss," + training_[0].name + ",test_loss,test_" + evaluation_[0].name +
                  ",lr,samples_per_second,seconds";
  for (std::size_t i = 1; i < training_.size(); ++i) h += ",train_" + training_[i].name;
  for (std::size_t i = 1; i < evaluation_.size(); ++i) h += ",test_" + evaluation_[i].name;
  if (with_val_) {
    h += ",val_loss";
    for (const TaskMetric& m : evaluation_) h += ",val_" + m.name;
  }
  return h + "\n";
}

void MetricsCsv::on_train_start(LoopState& state) {
  std::string kept = header();
  if (!state.resumed_from.empty() && std::filesystem::exists(path_)) {
    std::ifstream in(path_);
    std::string row;
    std::getline(in, row);  // the header
    while (std::getline(in, row))
      if (before_checkpoint(row, state)) kept += row + "\n";
  }
  write_file_atomically(path_, kept);
  out_.open(path_, std::ios::app);
  out_.precision(kDigits);
  check_written();
}

void MetricsCsv::check_written() {
  if (!out_) throw Error(path_.string() + ": cannot write the metrics: " + std::strerror(errno) +
                         "; the run stopped, the last checkpoint is intact (--resume last continues)");
}

void MetricsCsv::on_log_step(const LoopState& state, const StepFigures& f) {
  out_ << "step," << state.epoch << "," << state.step << "," << f.loss << ",,,," << f.lr << "," << f.samples_per_second
       << "," << std::string(training_.size() + evaluation_.size() - 2 + (with_val_ ? 1 + evaluation_.size() : 0), ',')
       << "\n"
       << std::flush;
  check_written();
}

void MetricsCsv::on_epoch_end(LoopState& state, const EpochMetrics& m) {
  out_ << "epoch," << m.epoch << "," << state.step << "," << m.train_loss << "," << cell(m.train, 0) << ",";
  if (m.test_loss) out_ << *m.test_loss;
  out_ << "," << cell(m.test, 0) << "," << m.lr << "," << m.samples_per_second << "," << m.seconds;
  for (std::size_t i = 1; i < training_.size(); ++i) out_ << "," << cell(m.train, i);
  for (std::size_t i = 1; i < evaluation_.size(); ++i) out_ << "," << cell(m.test, i);
  if (with_val_) {
    out_ << ",";
    if (m.val_loss) out_ << *m.val_loss;
    for (std::size_t i = 0; i < evaluation_.size(); ++i) out_ << "," << cell(m.val, i);
  }
  out_ << "\n" << std::flush;
  check_written();
}

}  // namespace plugtrain
