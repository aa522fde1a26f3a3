// The bundled "tensorboard" logger (SDK logger.h): every logged step's figures at its step, every
// epoch's at its epoch, into an event file under <run folder>/<folder>, which TensorBoard reads
// (`tensorboard --logdir runs`). The event file writer is the host's own (core/logging), compiled
// into this plugin: it needs nothing but the C++ library.
#include <memory>
#include <string>

#include <torch/version.h>

#include "logging/tensorboard_writer.h"
#include "plugtrain/logger.h"

namespace {

using namespace plugtrain;

class TensorBoardLogger final : public Logger {
 public:
  explicit TensorBoardLogger(std::string folder) : folder_(std::move(folder)) {}

  // A resumed run writes a new event file beside the old ones; TensorBoard reads them together.
  void start(const LoggedRun& run) override {
    if (run.resending()) return;  // everything was written when the run ran
    writer_ = std::make_unique<TensorBoardWriter>(std::filesystem::path(run.folder()) / folder_);
  }

  void log(const LoggedMetrics& figures) override {
    if (!writer_) return;
    const std::int64_t at = figures.kind() == MetricsKind::epoch ? figures.epoch() : figures.step();
    for (std::size_t i = 0; i < figures.size(); ++i) writer_->add_scalar(figures.key(i), figures.value(i), at);
    writer_->flush();
  }

  void artifact(const std::string&, const std::string&) override {}  // takes_files is false
  void finish(RunEnd) override {
    if (writer_) writer_->flush();
  }

 private:
  std::string folder_;
  std::unique_ptr<TensorBoardWriter> writer_;
};

void register_tensorboard(Registrar& host) {
  host.add_logger(
      {"tensorboard",
       "TensorBoard event files in the run folder: step metrics by step, epoch metrics by epoch",
       {{"folder", OptionType::string, std::string("tensorboard"), "the event files' folder in the run folder"}},
       [](const Options& o) { return std::make_unique<TensorBoardLogger>(o.string("folder")); },
       /*takes_files=*/false});
}

}  // namespace

PLUGTRAIN_PLUGIN(register_tensorboard, PLUGTRAIN_KIND_LOGGERS, "tensorboard", "1.0.0",
                 "logs runs as TensorBoard event files")
