// Checkpoints: everything needed to continue a run exactly — model weights, optimizer state
// with its parameter-group options, RNG states, each stateful part's section (the loop's
// counters, the sampler's position, the precision, each callback: state_section.h), the
// resolved experiment, and the plugtrain and LibTorch versions. Written atomically; tensors are
// loaded onto whatever device the resuming run uses. Checkpoints of format 1 (one flat
// "progress" record, before the sections) are read into sections (checkpoint_format1.cpp).
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>

#include <c10/core/Device.h>
#include <torch/optim/optimizer.h>

#include "plugtrain/model.h"
#include "checkpoint/checkpoint_error.h"
#include "checkpoint/state_section.h"
#include "util/error.h"

namespace torch::serialize {
class InputArchive;
}

namespace plugtrain {

struct CheckpointContent {
  CheckpointState state;        // every stateful part's section (checkpoint/state_section.h)
  std::string experiment_json;  // the resolved experiment that wrote it
  std::string model_name;
  std::string plugtrain_version, libtorch_version;
  // Averages of the weights by state_dict names, each an archive record beside "model": "ema"
  // (train.ema_decay), "swa" (train.swa_start). load_checkpoint reads back those it finds.
  std::map<std::string, std::vector<std::pair<std::string, at::Tensor>>> averages;
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

// Restores only the weights (parameters and buffers), for a model that is evaluated rather than
// trained on (`plugtrain evaluate`, `predict`); returns the metadata.
// `ema`: the EMA weights instead (a CheckpointError when the run kept none).
CheckpointContent load_checkpoint_weights(const std::filesystem::path& path, Model& model, c10::Device device,
                                          bool ema = false);

// The model's state_dict as Python names it: parameters and buffers, on the CPU.
std::vector<std::pair<std::string, at::Tensor>> model_state_dict(Model& model);

// The checkpoint's weights, parameters and buffers, by their state_dict names (torchvision's
// for the zoo's models), as contiguous CPU tensors, in the checkpoint's order.
// `ema`: its EMA weights instead (train.ema_decay; a CheckpointError when the run kept none).
std::vector<std::pair<std::string, at::Tensor>> checkpoint_weights(const std::filesystem::path& checkpoint,
                                                                   bool ema = false);

// `plugtrain export`: the checkpoint's weights as a file Python reads directly. torch: a dict
// name -> CPU tensor for torch.load (weights_only=True too); safetensors: for
// safetensors.torch.load_file (checkpoint/safetensors_file.h). Written atomically, and never
// over the checkpoint itself.
enum class ExportFormat { torch, safetensors };
void export_weights(const std::filesystem::path& checkpoint, const std::filesystem::path& out,
                    ExportFormat format = ExportFormat::torch, bool ema = false);

// The name of the archive record that holds the weights: "model", or "ema" for the EMA weights,
// which must then be there (else a CheckpointError naming the file and train.ema_decay).
std::string weights_record(const std::filesystem::path& checkpoint, torch::serialize::InputArchive& archive, bool ema);

// `[model] init`: loads a Python torch.save(model.state_dict()) file, or a `.safetensors` file
// (by its extension; read_safetensors), into the model; every missing, unexpected or mis-shaped
// key is listed in the error.
void load_python_state_dict(const std::filesystem::path& file, Model& model);

}  // namespace plugtrain
