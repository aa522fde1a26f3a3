// [checkpoint]: last.ckpt after every epoch (what --resume last continues from), best.ckpt when
// the monitored metric improves (save = "best"), epoch-NNNN.ckpt every N epochs keeping the
// newest K (save = "every"); and at the end, last.ckpt of a run stopped mid-epoch by an
// interrupt or finished by early stopping or max_steps.
#pragma once

#include <filesystem>
#include <string>

#include "train/best_so_far.h"
#include "train/callback.h"

namespace plugtrain {

struct Experiment;

class CheckpointSaver final : public Callback, public Stateful {
 public:
  // `monitor`: checkpoint.monitor, resolved against the run's task (save = "best").
  CheckpointSaver(std::filesystem::path folder, const Experiment& experiment, Monitor monitor);
  void on_epoch_end(LoopState& state, const EpochMetrics& m) override;
  void on_train_end(LoopState& state) override;
  const char* state_name() const override { return "checkpoint_saver"; }
  void save_state(StateSection& out) const override;
  void load_state(const StateSection& in) override;

  // Removes all but the newest `keep` epoch-NNNN.ckpt files of `folder` (keep 0: none removed).
  static void keep_newest_epoch_files(const std::filesystem::path& folder, std::int64_t keep);

 private:
  std::filesystem::path folder_;
  CheckpointSave save_;
  std::int64_t every_, keep_last_;
  Monitor monitor_;
  BestSoFar best_;
};

}  // namespace plugtrain
