#include "checkpoint/checkpoint.h"

#include <ATen/Context.h>
#include <ATen/core/Generator.h>
#include <torch/serialize.h>
#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>
#include <torch/version.h>
#include <caffe2/serialize/inline_container.h>
#include <torch/csrc/jit/serialization/pickler.h>
#include <torch/csrc/jit/serialization/pickler_helper.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "checkpoint/zip_integrity.h"
#include "util/atomic_file.h"
#include "util/text.h"
#include "version.h"

namespace plugtrain {

namespace {

const char* kFormat = "plugtrain-checkpoint-1";

void write_progress(torch::serialize::OutputArchive& a, const TrainingProgress& p) {
  a.write("progress.epochs_done", c10::IValue(p.epochs_done));
  a.write("progress.step", c10::IValue(p.step));
  a.write("progress.step_in_epoch", c10::IValue(p.step_in_epoch));
  a.write("progress.partial_loss_sum", c10::IValue(p.partial_loss_sum));
  a.write("progress.partial_correct", c10::IValue(p.partial_correct));
  a.write("progress.partial_seen", c10::IValue(p.partial_seen));
  a.write("progress.best_value", c10::IValue(p.best_value));
  a.write("progress.best_epoch", c10::IValue(p.best_epoch));
  a.write("progress.epochs_without_improvement", c10::IValue(p.epochs_without_improvement));
  a.write("progress.stopping_best", c10::IValue(p.stopping_best));
  a.write("progress.stopping_has_best", c10::IValue(p.stopping_has_best));
  a.write("progress.best_test_accuracy", c10::IValue(p.best_test_accuracy));
  a.write("progress.best_test_epoch", c10::IValue(p.best_test_epoch));
  a.write("progress.finished", c10::IValue(p.finished));
  a.write("progress.loss_scale", c10::IValue(p.loss_scale));
  a.write("progress.loss_scale_growth_tracker", c10::IValue(p.loss_scale_growth_tracker));
  a.write("progress.skipped_steps", c10::IValue(p.skipped_steps));
  a.write("progress.planned_step", c10::IValue(p.planned_step));
  a.write("progress.step_batch", c10::IValue(p.step_batch));
  a.write("progress.history", c10::IValue(p.history_json));
}

c10::IValue read_value(torch::serialize::InputArchive& a, const std::string& key) {
  c10::IValue v;
  a.read(key, v);
  return v;
}

TrainingProgress read_progress(torch::serialize::InputArchive& a) {
  TrainingProgress p;
  p.epochs_done = read_value(a, "progress.epochs_done").toInt();
  p.step = read_value(a, "progress.step").toInt();
  p.step_in_epoch = read_value(a, "progress.step_in_epoch").toInt();
  p.partial_loss_sum = read_value(a, "progress.partial_loss_sum").toDouble();
  p.partial_correct = read_value(a, "progress.partial_correct").toInt();
  p.partial_seen = read_value(a, "progress.partial_seen").toInt();
  p.best_value = read_value(a, "progress.best_value").toDouble();
  p.best_epoch = read_value(a, "progress.best_epoch").toInt();
  p.epochs_without_improvement = read_value(a, "progress.epochs_without_improvement").toInt();
  p.stopping_best = read_value(a, "progress.stopping_best").toDouble();
  p.stopping_has_best = read_value(a, "progress.stopping_has_best").toBool();
  p.best_test_accuracy = read_value(a, "progress.best_test_accuracy").toDouble();
  p.best_test_epoch = read_value(a, "progress.best_test_epoch").toInt();
  p.finished = read_value(a, "progress.finished").toBool();
  p.loss_scale = read_value(a, "progress.loss_scale").toDouble();
  p.loss_scale_growth_tracker = read_value(a, "progress.loss_scale_growth_tracker").toInt();
  p.skipped_steps = read_value(a, "progress.skipped_steps").toInt();
  // Added later: a checkpoint without them never halved its batch.
  c10::IValue v;
  p.planned_step = a.try_read("progress.planned_step", v) ? v.toInt() : p.step;
  p.step_batch = a.try_read("progress.step_batch", v) ? v.toInt() : 0;
  p.history_json = a.try_read("progress.history", v) && v.isString() ? v.toStringRef() : "";
  return p;
}

// Opens a checkpoint, turning every LibTorch complaint into one line naming the file.
void open_archive(const std::filesystem::path& path, torch::serialize::InputArchive& archive, c10::Device device) {
  if (!std::filesystem::is_regular_file(path))
    throw CheckpointError(path.string() + ": no such checkpoint file");
  // LibTorch reads a damaged tensor without a word: every record's CRC-32 is checked first.
  verify_zip_records(path);
  try {
    archive.load_from(path.string(), device);
  } catch (const std::exception& e) {
    std::string why = e.what();
    why = first_line(why);
    throw CheckpointError(path.string() + ": not a readable checkpoint (corrupt or truncated?): " + why);
  }
  c10::IValue format;
  if (!archive.try_read("plugtrain.format", format) || !format.isString() || format.toStringRef() != kFormat)
    throw CheckpointError(path.string() + ": not a plugtrain checkpoint (no '" + std::string(kFormat) + "' marker)");
}

CheckpointContent read_content(torch::serialize::InputArchive& a, const std::filesystem::path& path) {
  try {
    CheckpointContent c;
    c.progress = read_progress(a);
    c.experiment_json = read_value(a, "experiment").toStringRef();
    c.model_name = read_value(a, "model.name").toStringRef();
    c.plugtrain_version = read_value(a, "plugtrain.version").toStringRef();
    c.libtorch_version = read_value(a, "libtorch.version").toStringRef();
    return c;
  } catch (const std::exception& e) {
    std::string why = e.what();
    throw CheckpointError(path.string() + ": checkpoint is missing fields: " + first_line(why));
  }
}

at::Generator default_generator(c10::Device device) {
  return at::globalContext().defaultGenerator(device.is_cpu() ? c10::Device(c10::kCPU) : device);
}

}  // namespace

std::vector<std::pair<std::string, at::Tensor>> model_state_dict(Model& model) {
  std::vector<std::pair<std::string, at::Tensor>> out;
  for (const auto& p : model.named_parameters()) out.emplace_back(p.key(), p.value().detach().cpu());
  for (const auto& b : model.named_buffers()) out.emplace_back(b.key(), b.value().detach().cpu());
  return out;
}

void save_checkpoint(const std::filesystem::path& path, Model& model, torch::optim::Optimizer& optimizer,
                     const CheckpointContent& content, c10::Device device) {
  torch::serialize::OutputArchive archive;
  archive.write("plugtrain.format", c10::IValue(std::string(kFormat)));
  archive.write("plugtrain.version", c10::IValue(std::string(PLUGTRAIN_VERSION)));
  archive.write("libtorch.version", c10::IValue(std::string(TORCH_VERSION)));
  archive.write("experiment", c10::IValue(content.experiment_json));
  archive.write("model.name", c10::IValue(content.model_name));
  write_progress(archive, content.progress);
  torch::serialize::OutputArchive weights;
  for (const auto& [name, tensor] : model_state_dict(model)) weights.write(name, tensor);
  archive.write("model", weights);
  torch::serialize::OutputArchive optimizer_state;
  optimizer.save(optimizer_state);
  archive.write("optimizer", optimizer_state);
  archive.write("rng.cpu", at::globalContext().defaultGenerator(c10::Device(c10::kCPU)).get_state());
  if (!device.is_cpu()) archive.write("rng.device", default_generator(device).get_state());

  std::ostringstream bytes;
  archive.save_to(bytes);
  std::filesystem::create_directories(path.parent_path());
  write_file_atomically(path, bytes.str());
}

bool is_plugtrain_checkpoint(const std::filesystem::path& path) {
  try {
    torch::serialize::InputArchive archive;
    archive.load_from(path.string(), c10::Device(c10::kCPU));
    c10::IValue format;
    return archive.try_read("plugtrain.format", format) && format.isString() && format.toStringRef() == kFormat;
  } catch (const std::exception&) {
    return false;  // a Python torch.save file, or not LibTorch's at all
  }
}

CheckpointContent read_checkpoint_info(const std::filesystem::path& path) {
  torch::serialize::InputArchive archive;
  open_archive(path, archive, c10::Device(c10::kCPU));
  return read_content(archive, path);
}

CheckpointContent load_checkpoint(const std::filesystem::path& path, Model& model, torch::optim::Optimizer& optimizer,
                                  c10::Device device) {
  torch::serialize::InputArchive archive;
  open_archive(path, archive, device);
  CheckpointContent content = read_content(archive, path);
  try {
    torch::serialize::InputArchive weights;
    archive.read("model", weights);
    at::NoGradGuard no_grad;
    for (auto& p : model.named_parameters()) {
      at::Tensor saved;
      weights.read(p.key(), saved);
      p.value().copy_(saved);
    }
    for (auto& b : model.named_buffers()) {
      at::Tensor saved;
      weights.read(b.key(), saved, /*is_buffer=*/true);
      b.value().copy_(saved);
    }
    torch::serialize::InputArchive optimizer_state;
    archive.read("optimizer", optimizer_state);
    optimizer.load(optimizer_state);
    at::Tensor cpu_rng;
    archive.read("rng.cpu", cpu_rng);
    at::Generator cpu_generator = at::globalContext().defaultGenerator(c10::Device(c10::kCPU));  // a shared handle
    cpu_generator.set_state(cpu_rng.cpu());
    at::Tensor device_rng;
    if (!device.is_cpu() && archive.try_read("rng.device", device_rng))
      default_generator(device).set_state(device_rng.cpu());  // default_generator returns a handle copy
  } catch (const std::exception& e) {
    std::string why = e.what();
    throw CheckpointError(path.string() + ": does not fit this run's model '" + content.model_name +
                          "' or optimizer: " + first_line(why));
  }
  return content;
}

void open_checkpoint(const std::filesystem::path& path, torch::serialize::InputArchive& archive, c10::Device device) {
  open_archive(path, archive, device);
}

}  // namespace plugtrain
