#include "state/checkpoint.h"

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

#include "util/atomic_file.h"
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
  return p;
}

// Opens a checkpoint, turning every LibTorch complaint into one line naming the file.
void open_archive(const std::filesystem::path& path, torch::serialize::InputArchive& archive, c10::Device device) {
  if (!std::filesystem::is_regular_file(path))
    throw CheckpointError(path.string() + ": no such checkpoint file");
  try {
    archive.load_from(path.string(), device);
  } catch (const std::exception& e) {
    std::string why = e.what();
    why = why.substr(0, why.find('\n'));
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
    throw CheckpointError(path.string() + ": checkpoint is missing fields: " + why.substr(0, why.find('\n')));
  }
}

// The bytes Python's torch.save would write for `value`: a zip with data.pkl and one record per
// tensor storage. torch::pickle_save tags dicts with their C++ type, which Python's default
// torch.load(weights_only=True) refuses, so this pickles without type tags.
std::string torch_save_bytes(const c10::IValue& value) {
  std::string pickled;
  std::vector<at::Tensor> storages;
  torch::jit::Pickler pickler([&](const char* data, std::size_t size) { pickled.append(data, size); },
                              /*tensor_table=*/nullptr, /*type_renamer=*/nullptr, /*memoized_class_types=*/nullptr,
                              [&](const at::Tensor& t) {
                                storages.push_back(t);
                                return std::to_string(storages.size() - 1);
                              },
                              /*tag_aggregates=*/false);
  pickler.protocol();
  pickler.pushIValue(value);
  pickler.stop();

  std::string zip;
  caffe2::serialize::PyTorchStreamWriter writer([&](const void* data, std::size_t size) {
    zip.append(static_cast<const char*>(data), size);
    return size;
  });
  writer.writeRecord("data.pkl", pickled.data(), pickled.size());
  writer.writeRecord("byteorder", "little", 6);
  for (std::size_t i = 0; i < storages.size(); ++i) {
    const torch::jit::WriteableTensorData bytes = torch::jit::getWriteableTensorData(storages[i]);
    writer.writeRecord("data/" + std::to_string(i), bytes.data(), bytes.sizeInBytes());
  }
  writer.writeEndOfFile();
  return zip;
}

// Python's model.state_dict() is a collections.OrderedDict carrying a `_metadata` attribute.
// LibTorch's unpickler reads any OrderedDict(...) call as None (it expects one only as a
// tensor's unused backward-hooks argument) and supports neither POP nor a dict BUILD, so
// torch::pickle_load cannot read such a file as it is. This rewrites data.pkl into the plain
// dict it stands for: the leading `GLOBAL collections.OrderedDict; BINPUT 0; EMPTY_TUPLE;
// REDUCE` becomes EMPTY_DICT, every later `BINGET 0; EMPTY_TUPLE; REDUCE` (an empty
// OrderedDict, i.e. the hooks argument) becomes NONE, and the trailing `_metadata` state and
// BUILD are dropped. Files that do not start that way are passed through untouched.
std::vector<char> plain_dict_from_python_state_dict(const std::vector<char>& file) {
  std::istringstream in(std::string(file.begin(), file.end()));
  caffe2::serialize::PyTorchStreamReader reader(&in);
  static const char head_bytes[] = "\x80\x02" "ccollections\nOrderedDict\n" "q\x00" ")R";
  static const std::string head(head_bytes, sizeof head_bytes - 1);  // holds a NUL: keep the length
  // The hooks argument follows the requires_grad flag (NEWFALSE / NEWTRUE) in _rebuild_tensor_v2's
  // argument tuple; anchoring on it keeps the edit away from bytes inside other arguments.
  static const std::string hooks_after_false("\x89h\x00)R", 5), hooks_after_true("\x88h\x00)R", 5);
  static const std::string metadata_key("X\x09\x00\x00\x00_metadata", 14);
  std::string zip;
  caffe2::serialize::PyTorchStreamWriter writer([&](const void* data, std::size_t size) {
    zip.append(static_cast<const char*>(data), size);
    return size;
  });
  writer.setMinVersion(reader.version());
  for (const std::string& name : reader.getAllRecords()) {
    if (name == "version" || name == ".data/version" || name == ".data/serialization_id") continue;
    auto [data, size] = reader.getRecord(name);
    std::string bytes(static_cast<const char*>(data.get()), size);
    if (name == "data.pkl" && bytes.compare(0, head.size(), head) == 0) {
      std::string plain = std::string("\x80\x02", 2) + "}";
      for (std::size_t i = head.size(); i < bytes.size();) {
        if (bytes.compare(i, hooks_after_false.size(), hooks_after_false) == 0 ||
            bytes.compare(i, hooks_after_true.size(), hooks_after_true) == 0) {
          plain += bytes[i];  // the requires_grad flag
          plain += 'N';
          i += hooks_after_false.size();
        } else {
          plain += bytes[i++];
        }
      }
      // `... SETITEMS (or SETITEM for a single item) EMPTY_DICT BINPUT n '_metadata' ... BUILD
      // STOP`: keep up to the SETITEM(S).
      const std::size_t meta = plain.rfind(metadata_key);
      for (std::size_t back : {4, 7})  // BINPUT (2 bytes) or LONG_BINPUT (5 bytes) before the key
        if (meta != std::string::npos && meta >= back && (plain[meta - back] == 'u' || plain[meta - back] == 's') &&
            plain[meta - back + 1] == '}') {
          plain.resize(meta - back + 1);
          plain += '.';
          break;
        }
      bytes = std::move(plain);
    }
    writer.writeRecord(name, bytes.data(), bytes.size());
  }
  writer.writeEndOfFile();
  return std::vector<char>(zip.begin(), zip.end());
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
                          "' or optimizer: " + why.substr(0, why.find('\n')));
  }
  return content;
}

void export_state_dict(const std::filesystem::path& checkpoint, const std::filesystem::path& out) {
  torch::serialize::InputArchive archive;
  open_archive(checkpoint, archive, c10::Device(c10::kCPU));
  torch::serialize::InputArchive weights;
  archive.read("model", weights);
  c10::impl::GenericDict dict(c10::StringType::get(), c10::TensorType::get());
  for (const auto& key : weights.keys()) {
    at::Tensor t;
    if (weights.try_read(key, t) || weights.try_read(key, t, /*is_buffer=*/true)) dict.insert(key, t.cpu().contiguous());
  }
  write_file_atomically(out, torch_save_bytes(c10::IValue(dict)));
}

void load_python_state_dict(const std::filesystem::path& file, Model& model) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw CheckpointError(file.string() + ": cannot open the state_dict file");
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  c10::IValue loaded;
  try {
    loaded = torch::pickle_load(plain_dict_from_python_state_dict(bytes));
  } catch (const std::exception& e) {
    std::string why = e.what();
    throw CheckpointError(file.string() + ": not a torch.save file: " + why.substr(0, why.find('\n')));
  }
  if (!loaded.isGenericDict())
    throw CheckpointError(file.string() + ": expected a state_dict (a dict of tensors), got " +
                          loaded.tagKind());
  std::map<std::string, at::Tensor> saved;
  for (const auto& item : loaded.toGenericDict()) {
    if (!item.key().isString() || !item.value().isTensor())
      throw CheckpointError(file.string() + ": the state_dict holds something other than name -> tensor");
    saved[item.key().toStringRef()] = item.value().toTensor();
  }
  std::vector<std::string> problems;
  std::set<std::string> used;
  std::map<std::string, at::Tensor> targets;
  for (auto& p : model.named_parameters()) targets[p.key()] = p.value();
  for (auto& b : model.named_buffers()) targets[b.key()] = b.value();
  for (const auto& [name, target] : targets) {
    auto it = saved.find(name);
    if (it == saved.end()) {
      problems.push_back("missing " + name);
      continue;
    }
    used.insert(name);
    if (it->second.sizes() != target.sizes()) {
      std::ostringstream msg;
      msg << "shape of " << name << ": file " << it->second.sizes() << ", model " << target.sizes();
      problems.push_back(msg.str());
    }
  }
  for (const auto& [name, tensor] : saved)
    if (!used.count(name)) problems.push_back("unexpected " + name);
  if (!problems.empty()) {
    std::string list;
    for (const auto& p : problems) list += (list.empty() ? "" : "; ") + p;
    throw CheckpointError(file.string() + ": does not match the model: " + list);
  }
  at::NoGradGuard no_grad;
  for (auto& [name, target] : targets) target.copy_(saved[name]);
}

}  // namespace plugtrain
