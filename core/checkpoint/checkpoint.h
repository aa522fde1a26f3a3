// Checkpoints: everything needed to continue a run exactly — model weights, optimizer state
// with its parameter-group options, epoch/step counters (the learning-rate schedule is a
// function of the step), partial-epoch sums, best-so-far tracking, RNG states, the resolved
// experiment, and the plugtrain and LibTorch versions. Written atomically; tensors are loaded
// onto whatever device the resuming run uses.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include <c10/core/Device.h>
#include <torch/optim/optimizer.h>

#include "plugtrain/model.h"
#include "checkpoint/checkpoint_error.h"
#include "util/error.h"

namespace torch::serialize {
class InputArchive;
}

namespace plugtrain {

struct TrainingProgress {
  std::int64_t epochs_done = 0;     // completed epochs
  std::int64_t step = 0;            // optimizer steps so far
  std::int64_t step_in_epoch = 0;   // > 0 when saved in the middle of epoch epochs_done + 1
  double partial_loss_sum = 0;      // that epoch's running sums so far
  std::int64_t partial_correct = 0;
  std::int64_t partial_seen = 0;
  double best_value = 0;            // monitored metric's best, valid when best_epoch > 0
  std::int64_t best_epoch = 0;
  std::int64_t epochs_without_improvement = 0;  // early stopping
  double stopping_best = 0;
  bool stopping_has_best = false;
  double best_test_accuracy = 0;
  std::int64_t best_test_epoch = 0;
  bool finished = false;  // the run ended by max_steps or early stopping
  double loss_scale = 0;  // fp16 dynamic loss scaling (0: not used)
  std::int64_t loss_scale_growth_tracker = 0;
  std::int64_t skipped_steps = 0;
  // Out-of-memory halving (0.4): steps at the planned batch so far (the schedule and max_steps
  // count these; older checkpoints: = step), and the samples each step trains on now when a
  // halving made it smaller than the loader's batch (0: the loader's batch).
  std::int64_t planned_step = 0;
  std::int64_t step_batch = 0;
  std::string history_json;  // every completed epoch's figures, a JSON array (0.4; older: none)
};

struct CheckpointContent {
  TrainingProgress progress;
  std::string experiment_json;  // the resolved experiment that wrote it
  std::string model_name;
  std::string plugtrain_version, libtorch_version;
};

void save_checkpoint(const std::filesystem::path& path, Model& model, torch::optim::Optimizer& optimizer,
                     const CheckpointContent& content, c10::Device device);

// Opens a checkpoint for reading, turning every LibTorch complaint into one line naming the file.
void open_checkpoint(const std::filesystem::path& path, torch::serialize::InputArchive& archive, c10::Device device);

// Whether `path` is a plugtrain checkpoint (its format marker), without checking the rest.
bool is_plugtrain_checkpoint(const std::filesystem::path& path);

// Reads only the metadata (cheap checks before building anything).
CheckpointContent read_checkpoint_info(const std::filesystem::path& path);

// Restores weights, optimizer state and RNG states; returns the metadata.
CheckpointContent load_checkpoint(const std::filesystem::path& path, Model& model, torch::optim::Optimizer& optimizer,
                                  c10::Device device);

// The model's state_dict as Python names it: parameters and buffers, on the CPU.
std::vector<std::pair<std::string, at::Tensor>> model_state_dict(Model& model);

// `plugtrain export`: the checkpoint's weights as a file Python's torch.load reads directly
// (a dict name -> CPU tensor).
void export_state_dict(const std::filesystem::path& checkpoint, const std::filesystem::path& out);

// `[model] init`: loads a Python torch.save(model.state_dict()) file into the model; every
// missing, unexpected or mis-shaped key is listed in the error.
void load_python_state_dict(const std::filesystem::path& file, Model& model);

}  // namespace plugtrain
