#include "checkpoint/checkpoint.h"

#include <ATen/Context.h>
#include <ATen/core/Generator.h>
#include <caffe2/serialize/inline_container.h>
#include <torch/csrc/jit/serialization/pickler.h>
#include <torch/csrc/jit/serialization/pickler_helper.h>
#include <torch/serialize.h>
#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>
#include <torch/version.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <variant>

#include "checkpoint/checkpoint_format1.h"
#include "util/atomic_file.h"
#include "util/text.h"
#include "util/zip_records.h"
#include "version.h"

namespace plugtrain {

namespace {

// Format 2 stores each part's section as "state.<section>.<key>" values; format 1 stored one
// flat "progress.*" record (checkpoint_format1.cpp reads it).
const char* kFormat = "plugtrain-checkpoint-2";
const char* kFormat1 = "plugtrain-checkpoint-1";
const std::string kStatePrefix = "state.";

c10::IValue to_ivalue(const StateSection::Value& value) {
  return std::visit([](const auto& v) { return c10::IValue(v); }, value);
}

void write_state(torch::serialize::OutputArchive& a, const CheckpointState& state) {
  for (const auto& [name, section] : state.sections())
    for (const auto& [key, value] : section.values()) a.write(kStatePrefix + name + "." + key, to_ivalue(value));
}

CheckpointState read_state(torch::serialize::InputArchive& a) {
  CheckpointState state;
  for (const std::string& full_key : a.keys()) {
    if (full_key.rfind(kStatePrefix, 0) != 0) continue;
    const std::size_t dot = full_key.find('.', kStatePrefix.size());
    if (dot == std::string::npos) continue;
    StateSection& section = state.section(full_key.substr(kStatePrefix.size(), dot - kStatePrefix.size()));
    const std::string key = full_key.substr(dot + 1);
    c10::IValue v;
    a.read(full_key, v);
    if (v.isBool())
      section.put_flag(key, v.toBool());
    else if (v.isInt())
      section.put_int(key, v.toInt());
    else if (v.isDouble())
      section.put_real(key, v.toDouble());
    else if (v.isString())
      section.put_text(key, v.toStringRef());
    else
      throw CheckpointError("'" + full_key + "' holds a " + v.tagKind() + ", not a value a part's state has");
  }
  return state;
}

c10::IValue read_value(torch::serialize::InputArchive& a, const std::string& key) {
  c10::IValue v;
  a.read(key, v);
  return v;
}

// The checkpoint format the archive's marker names: 2 (sections), 1 (the flat record), or 0
// (no marker of ours).
int format_of(torch::serialize::InputArchive& archive) {
  c10::IValue marker;
  if (!archive.try_read("plugtrain.format", marker) || !marker.isString()) return 0;
  return marker.toStringRef() == kFormat ? 2 : marker.toStringRef() == kFormat1 ? 1 : 0;
}

// Opens a checkpoint, turning every LibTorch complaint into one line naming the file.
void open_archive(const std::filesystem::path& path, torch::serialize::InputArchive& archive, c10::Device device) {
  if (!std::filesystem::is_regular_file(path)) throw CheckpointError(path.string() + ": no such checkpoint file");
  // LibTorch reads a damaged tensor without a word: every record's CRC-32 is checked first.
  try {
    scan_zip_records(path);
  } catch (const ZipError& e) {
    throw CheckpointError(path.string() + ": not a readable checkpoint (corrupt or truncated?): " + e.what());
  }
  try {
    archive.load_from(path.string(), device);
  } catch (const std::exception& e) {
    std::string why = e.what();
    why = first_line(why);
    throw CheckpointError(path.string() + ": not a readable checkpoint (corrupt or truncated?): " + why);
  }
  if (format_of(archive) == 0)
    throw CheckpointError(path.string() + ": not a plugtrain checkpoint (no '" + std::string(kFormat) + "' or '" +
                          kFormat1 + "' marker)");
}

CheckpointContent read_content(torch::serialize::InputArchive& a, const std::filesystem::path& path) {
  try {
    CheckpointContent c;
    c.state = format_of(a) == 1 ? format1_state(a) : read_state(a);
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

// The archive's "model" record into the model's parameters and buffers, each by its name.
void read_weights(torch::serialize::InputArchive& archive, Model& model, const std::string& record = "model") {
  torch::serialize::InputArchive weights;
  archive.read(record, weights);
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
  write_state(archive, content.state);
  torch::serialize::OutputArchive weights;
  for (const auto& [name, tensor] : model_state_dict(model)) weights.write(name, tensor);
  archive.write("model", weights);
  for (const auto& [record, tensors] : content.averages) {
    torch::serialize::OutputArchive average;
    for (const auto& [name, tensor] : tensors) average.write(name, tensor);
    archive.write(record, average);
  }
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
    return format_of(archive) != 0;
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
    read_weights(archive, model);
    for (const char* record : {"ema", "swa"}) {
      torch::serialize::InputArchive average;
      if (!archive.try_read(record, average)) continue;
      auto& tensors = content.averages[record];
      for (const std::string& name : average.keys()) {
        at::Tensor t;
        if (average.try_read(name, t) || average.try_read(name, t, /*is_buffer=*/true)) tensors.emplace_back(name, t);
      }
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

std::string weights_record(const std::filesystem::path& checkpoint, torch::serialize::InputArchive& archive, bool ema) {
  if (!ema) return "model";
  torch::serialize::InputArchive probe;
  if (!archive.try_read("ema", probe))
    throw CheckpointError(checkpoint.string() + ": has no EMA weights (its run had train.ema_decay = 0)");
  return "ema";
}

CheckpointContent load_checkpoint_weights(const std::filesystem::path& path, Model& model, c10::Device device,
                                          bool ema) {
  torch::serialize::InputArchive archive;
  open_archive(path, archive, device);
  CheckpointContent content = read_content(archive, path);
  const std::string record = weights_record(path, archive, ema);
  try {
    read_weights(archive, model, record);
  } catch (const std::exception& e) {
    std::string why = e.what();
    throw CheckpointError(path.string() + ": does not fit the model '" + content.model_name +
                          "' built for it: " + first_line(why));
  }
  return content;
}

void open_checkpoint(const std::filesystem::path& path, torch::serialize::InputArchive& archive, c10::Device device) {
  open_archive(path, archive, device);
}

}  // namespace plugtrain
