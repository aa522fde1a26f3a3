#include "train/callbacks/checkpoint_saver.h"

#include <algorithm>
#include <cstdio>
#include <vector>

#include "config/experiment.h"

namespace plugtrain {

CheckpointSaver::CheckpointSaver(std::filesystem::path folder, const Experiment& e, Monitor monitor)
    : folder_(std::move(folder)),
      save_(e.checkpoint.save),
      every_(e.checkpoint.every_n_epochs),
      keep_last_(e.checkpoint.keep_last),
      monitor_(std::move(monitor)),
      best_(monitor_.direction == Direction::max) {}

void CheckpointSaver::on_epoch_end(LoopState& state, const EpochMetrics& m) {
  // Epochs without the monitored metric (a test metric between evaluations) do not count.
  const std::optional<double> value = m.metric(monitor_.name);
  const bool new_best = value && best_.offer(*value, m.epoch);
  if (save_ == CheckpointSave::best && new_best) state.save_checkpoint(folder_ / "best.ckpt");
  const bool ending = state.stopping() || m.epoch == state.epochs;
  if (save_ == CheckpointSave::every && (m.epoch % every_ == 0 || ending)) {
    char name[32];
    std::snprintf(name, sizeof name, "epoch-%04lld.ckpt", static_cast<long long>(m.epoch));
    state.save_checkpoint(folder_ / name);
    keep_newest_epoch_files(folder_, keep_last_);
  }
  state.save_checkpoint(folder_ / "last.ckpt");
}

void CheckpointSaver::on_train_end(LoopState& state) {
  const bool mid_epoch_interrupt = state.stop == StopReason::interrupted && state.sampler.batches_done > 0;
  if (mid_epoch_interrupt || state.finished) state.save_checkpoint(folder_ / "last.ckpt");
}

void CheckpointSaver::save_state(StateSection& out) const { best_.save(out); }

void CheckpointSaver::load_state(const StateSection& in) { best_.load(in); }

void CheckpointSaver::keep_newest_epoch_files(const std::filesystem::path& folder, std::int64_t keep) {
  if (keep <= 0 || folder.empty()) return;  // empty: a rank that takes part in saving and writes nothing
  std::vector<std::filesystem::path> files;
  for (const auto& f : std::filesystem::directory_iterator(folder))
    if (f.path().filename().string().rfind("epoch-", 0) == 0 && f.path().extension() == ".ckpt")
      files.push_back(f.path());
  std::sort(files.begin(), files.end());  // epoch-NNNN: by name is by epoch
  for (std::size_t i = 0; i + std::size_t(keep) < files.size(); ++i) std::filesystem::remove(files[i]);
}

}  // namespace plugtrain
