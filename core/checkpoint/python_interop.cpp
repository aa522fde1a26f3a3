// Weights to and from Python: `plugtrain export` writes what torch.save(model.state_dict())
// would (or a safetensors file: safetensors_file.h), and `[model] init` reads either: both
// formats become one name -> tensor map, matched against the model in one place.
#include "checkpoint/checkpoint.h"

#include <torch/serialize.h>
#include <torch/serialize/input-archive.h>
#include <caffe2/serialize/inline_container.h>
#include <torch/csrc/jit/serialization/pickler.h>
#include <torch/csrc/jit/serialization/pickler_helper.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "checkpoint/safetensors_file.h"
#include "util/atomic_file.h"
#include "util/text.h"

namespace plugtrain {

namespace {

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

}  // namespace

std::vector<std::pair<std::string, at::Tensor>> checkpoint_weights(const std::filesystem::path& checkpoint, bool ema) {
  torch::serialize::InputArchive archive;
  open_checkpoint(checkpoint, archive, c10::Device(c10::kCPU));
  torch::serialize::InputArchive weights;
  archive.read(weights_record(checkpoint, archive, ema), weights);
  std::vector<std::pair<std::string, at::Tensor>> named;
  for (const auto& key : weights.keys()) {
    at::Tensor t;
    if (weights.try_read(key, t) || weights.try_read(key, t, /*is_buffer=*/true))
      named.emplace_back(key, t.cpu().contiguous());
  }
  return named;
}

void export_weights(const std::filesystem::path& checkpoint, const std::filesystem::path& out, ExportFormat format,
                    bool ema) {
  // The output replaces its target: never the checkpoint itself (also through a link).
  std::error_code ec;
  if (std::filesystem::exists(out, ec) && std::filesystem::equivalent(checkpoint, out, ec))
    throw CheckpointError(out.string() + ": is the checkpoint being exported (" + checkpoint.string() +
                          "); name a new file, e.g. " +
                          (format == ExportFormat::safetensors ? "model.safetensors" : "model.pt"));
  const auto weights = checkpoint_weights(checkpoint, ema);
  if (format == ExportFormat::safetensors) {
    write_safetensors(out, weights);
    return;
  }
  c10::impl::GenericDict dict(c10::StringType::get(), c10::TensorType::get());
  for (const auto& [name, tensor] : weights) dict.insert(name, tensor);
  write_file_atomically(out, torch_save_bytes(c10::IValue(dict)));
}

namespace {

// A torch.save(model.state_dict()) file's tensors by name.
std::map<std::string, at::Tensor> read_torch_save_state_dict(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw CheckpointError(file.string() + ": cannot open the state_dict file");
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  c10::IValue loaded;
  try {
    loaded = torch::pickle_load(plain_dict_from_python_state_dict(bytes));
  } catch (const std::exception& e) {
    std::string why = e.what();
    throw CheckpointError(file.string() + ": not a torch.save file: " + first_line(why));
  }
  if (!loaded.isGenericDict())
    throw CheckpointError(file.string() + ": expected a state_dict (a dict of tensors), got " + loaded.tagKind());
  std::map<std::string, at::Tensor> saved;
  for (const auto& item : loaded.toGenericDict()) {
    if (!item.key().isString() || !item.value().isTensor())
      throw CheckpointError(file.string() + ": the state_dict holds something other than name -> tensor");
    saved[item.key().toStringRef()] = item.value().toTensor();
  }
  return saved;
}

bool is_safetensors(const std::filesystem::path& file) {
  std::string extension = file.extension().string();
  std::transform(extension.begin(), extension.end(), extension.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  return extension == ".safetensors";
}

// The file's tensors into the model's parameters and buffers, whichever format they came from;
// every missing, unexpected or mis-shaped key is listed in one error first.
void load_named_tensors(const std::filesystem::path& file, std::map<std::string, at::Tensor>& saved, Model& model) {
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
  // A key the model lacks is accepted when its tensor is one the model loads under another name:
  // tied weights (nanoGPT's lm_head.weight is transformer.wte.weight), which torch.save keeps as
  // one storage and a model here registers once (safetensors files hold each as a copy).
  const auto tied_to_a_loaded_key = [&](const at::Tensor& tensor) {
    for (const std::string& name : used) {
      const at::Tensor& loaded = saved[name];
      if (loaded.sizes() != tensor.sizes() || loaded.scalar_type() != tensor.scalar_type()) continue;
      const bool same_view = loaded.is_alias_of(tensor) && loaded.strides() == tensor.strides() &&
                             loaded.storage_offset() == tensor.storage_offset();
      if (same_view || at::equal(loaded, tensor)) return true;  // a reader that copied shared storages
    }
    return false;
  };
  for (const auto& [name, tensor] : saved)
    if (!used.count(name) && !tied_to_a_loaded_key(tensor)) problems.push_back("unexpected " + name);
  if (!problems.empty()) {
    throw CheckpointError(file.string() + ": does not match the model: " + join(problems, "; "));
  }
  at::NoGradGuard no_grad;
  for (auto& [name, target] : targets) target.copy_(saved[name]);
}

}  // namespace

void load_python_state_dict(const std::filesystem::path& file, Model& model) {
  std::map<std::string, at::Tensor> saved =
      is_safetensors(file) ? read_safetensors(file) : read_torch_save_state_dict(file);
  load_named_tensors(file, saved, model);
}

}  // namespace plugtrain
