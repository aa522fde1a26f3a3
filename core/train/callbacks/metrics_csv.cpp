#include "train/callbacks/metrics_csv.h"

#include <cerrno>
#include <cstring>
#include <sstream>

#include "util/atomic_file.h"
#include "util/error.h"

namespace plugtrain {

namespace {

const char* kHeader = "kind,epoch,step,loss,accuracy,test_loss,test_accuracy,lr,samples_per_second,seconds\n";

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

}  // namespace

MetricsCsv::MetricsCsv(const std::filesystem::path& path) : path_(path) {}

void MetricsCsv::on_train_start(LoopState& state) {
  std::string kept = kHeader;
  if (!state.resumed_from.empty() && std::filesystem::exists(path_)) {
    std::ifstream in(path_);
    std::string row;
    std::getline(in, row);  // the header
    while (std::getline(in, row))
      if (before_checkpoint(row, state)) kept += row + "\n";
  }
  write_file_atomically(path_, kept);
  out_.open(path_, std::ios::app);
  check_written();
}

void MetricsCsv::check_written() {
  if (!out_) throw Error(path_.string() + ": cannot write the metrics: " + std::strerror(errno) +
                         "; the run stopped, the last checkpoint is intact (--resume last continues)");
}

void MetricsCsv::on_log_step(const LoopState& state, const StepFigures& f) {
  out_ << "step," << state.epoch << "," << state.step << "," << f.loss << ",,,," << f.lr << "," << f.samples_per_second
       << ",\n"
       << std::flush;
  check_written();
}

void MetricsCsv::on_epoch_end(LoopState& state, const EpochMetrics& m) {
  out_ << "epoch," << m.epoch << "," << state.step << "," << m.train_loss << "," << m.train_accuracy << ",";
  if (m.test_loss) out_ << *m.test_loss;
  out_ << ",";
  if (m.test_accuracy) out_ << *m.test_accuracy;
  out_ << "," << m.lr << "," << m.samples_per_second << "," << m.seconds << "\n" << std::flush;
  check_written();
}

}  // namespace plugtrain
