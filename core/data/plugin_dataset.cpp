#include "data/plugin_dataset.h"

#include "data/data_error.h"
#include "data/target_kinds.h"
#include "util/format.h"
#include "util/text.h"

namespace plugtrain::data {

namespace {

// The 1-D stretch of storage that windows (overlapping strided views of one stream) read, so a
// check reads each token once: a reduction over the overlapping view itself would first copy
// every window (1.45 million windows of 64 tokens: 750 MB for the Jargon File).
at::Tensor stream_under(const at::Tensor& windows) {
  int64_t span = 1;
  for (int64_t d = 0; d < windows.dim(); ++d) {
    if (windows.stride(d) < 0) return windows;
    span += (windows.size(d) - 1) * windows.stride(d);
  }
  return windows.as_strided({span}, {1}, windows.storage_offset());
}

// A language model's split: int64 (N, T) windows of token ids and the (N, T) tokens that follow
// them, kept as given (overlapping strided views of one stream stay views), every id inside the
// vocabulary.
void take_token_windows(const DatasetReadSplit& split, int64_t vocabulary, const std::string& where, Dataset& d) {
  const at::Tensor& x = split.inputs;
  const at::Tensor& y = split.targets;
  if (!x.defined() || x.dim() != 2 || x.scalar_type() != at::kLong)
    throw DataError(where + ": a language model's inputs must be int64 (N, T) token ids, got " +
                    (x.defined() ? std::string(c10::toString(x.scalar_type())) + " " + shape_text(x.sizes()) : "none"));
  if (!y.defined() || y.sizes() != x.sizes() || y.scalar_type() != at::kLong)
    throw DataError(where + ": the next tokens must be int64 of the inputs' shape " + shape_text(x.sizes()) + ", got " +
                    (y.defined() ? std::string(c10::toString(y.scalar_type())) + " " + shape_text(y.sizes()) : "none"));
  if (vocabulary < 1) throw DataError(where + ": the vocabulary is empty");
  for (const at::Tensor& windows : {x, y}) {
    if (windows.numel() == 0) continue;
    const at::Tensor ids = stream_under(windows);
    const int64_t lo = ids.min().item<int64_t>(), hi = ids.max().item<int64_t>();
    if (lo < 0 || hi >= vocabulary)
      throw DataError(where + ": token id " + std::to_string(lo < 0 ? lo : hi) + " is outside the vocabulary of " +
                      std::to_string(vocabulary) + " (0.." + std::to_string(vocabulary - 1) + ")");
  }
  d.images = x.to(at::kCPU);
  d.labels = y.to(at::kCPU);
  d.sample_shape = {x.size(1)};
}

// One split as the host's Dataset: inputs (N, C, H, W) bytes or floats in memory, or decoded
// on demand (a reader's split without inputs), and N targets of the kind.
Dataset to_dataset(const DatasetReadSplit& split, int64_t num_classes, const std::vector<std::string>& class_names,
                   DatasetTargets kind, const std::string& where) {
  const at::Tensor& x = split.inputs;
  const at::Tensor& y = split.targets;
  Dataset d;
  const bool tokens = kind == DatasetTargets::next_token;
  if (tokens) {
    take_token_windows(split, num_classes, where, d);
  } else if (x.defined()) {
    if (x.dim() != 4 || (x.scalar_type() != at::kByte && x.scalar_type() != at::kFloat))
      throw DataError(where + ": inputs must be uint8 or float32 (N, C, H, W), got " +
                      std::string(c10::toString(x.scalar_type())) + " " + shape_text(x.sizes()));
    d.images = x.to(at::kCPU).contiguous();
    d.sample_shape = {x.size(1), x.size(2), x.size(3)};
  } else if (split.decode) {
    if (split.sample_shape.size() != 3 || split.sample_shape[0] < 1 || split.sample_shape[1] < 1 || split.sample_shape[2] < 1)
      throw DataError(where + ": samples decoded on demand need sample_shape [C, H, W], got " + shape_text(split.sample_shape));
    d.sample_shape = split.sample_shape;
    // The loader's contract (data/dataset.h): a DataError naming the file.
    d.decode = [decode = split.decode, where](int64_t index, uint8_t* pixels) {
      try {
        decode(index, pixels);
      } catch (const std::exception& e) {
        throw DataError(first_line(e.what()));
      } catch (...) {
        throw DataError(where + ": decoding sample " + std::to_string(index) + " threw something that is not a std::exception");
      }
    };
  } else {
    throw DataError(where + ": no inputs (neither a tensor nor a decoder)");
  }
  if (!y.defined() || y.dim() < 1) throw DataError(where + ": no targets");
  if (!x.defined() && split.count > 0 && y.size(0) != split.count)
    throw DataError(where + ": " + std::to_string(split.count) + " samples decoded on demand but " + std::to_string(y.size(0)) +
                    " targets");
  if (x.defined() && y.size(0) != x.size(0))
    throw DataError(where + ": " + std::to_string(x.size(0)) + " inputs but " + std::to_string(y.size(0)) + " targets");
  const bool integral =
      kind == DatasetTargets::class_index || kind == DatasetTargets::pixel_class || kind == DatasetTargets::sequence;
  if (!tokens) d.labels = (integral ? y.to(at::kCPU, at::kLong) : y.to(at::kCPU, at::kFloat)).contiguous();
  d.target_kind = kind;
  d.num_classes = num_classes;
  d.class_names = class_names;
  if (kind == DatasetTargets::class_index) check_labels(d.labels, d.num_classes, where);
  return d;
}

// A split's named fields: N rows each; input_lengths int64 (N), each at least 1 (the
// model checks the upper bound: only it knows how many steps its input holds).
void add_fields(Dataset& d, const std::map<std::string, torch::Tensor>& fields, const std::string& where) {
  for (const auto& [name, t] : fields) {
    if (name == "input" || name == "target")
      throw DataError(where + ": field '" + name + "' is the split's own (its inputs and targets)");
    if (!t.defined() || t.dim() < 1 || t.size(0) != d.size())
      throw DataError(where + ": field '" + name + "' must have one row per sample (" + std::to_string(d.size()) +
                      "), got " + (t.defined() ? shape_text(t.sizes()) : "none"));
    at::Tensor field = t.to(at::kCPU).contiguous();
    if (name == "input_lengths") {
      if (field.dim() != 1 || field.scalar_type() != at::kLong)
        throw DataError(where + ": field 'input_lengths' must be int64 (N), got " + std::string(c10::toString(field.scalar_type())) +
                        " " + shape_text(field.sizes()));
      if (d.size() > 0 && field.min().item<std::int64_t>() < 1)
        throw DataError(where + ": field 'input_lengths' has a length below 1");
    }
    d.fields[name] = field;
  }
}

}  // namespace

LoadedData load_plugin_dataset(const DataOptions& o) {
  const DatasetSpec& spec = *o.dataset;
  const std::string name = "data set '" + spec.name + "' (plugin '" + o.plugin + "')";
  DatasetRead read;
  try {
    const PluginQuery query(o);
    read = spec.read(query, o.dataset_options);
  } catch (const std::exception& e) {
    throw DataError(name + ": " + first_line(e.what()));
  } catch (...) {
    throw DataError(name + ": it threw something that is not a std::exception");
  }
  if (!read.targets) read.targets = spec.targets;
  if (spec.validation_split.empty() && (read.validation.inputs.defined() || read.validation.decode))
    throw DataError(name + ": it gave a validation split, which it did not declare (DatasetSpec::validation_split)");
  const std::optional<DatasetTargets> known = target_kind_of(*read.targets);
  if (!known) throw DataError(name + ": unknown kind of target " + std::to_string(int(*read.targets)));
  const std::optional<DatasetTargets> wanted =
      spec.targets == DatasetTargets::as_task ? o.task_targets : target_kind_of(spec.targets);
  if (*known != wanted)
    throw DataError(name + ": it read " + describe(*known) + ", but " +
                    (spec.targets == DatasetTargets::as_task ? "the task learns " : "it registered ") +
                    (wanted ? describe(*wanted) : "an unknown kind"));
  LoadedData out;
  out.data.train = to_dataset(read.train, read.num_classes, read.class_names, *known, name + " training split");
  if (out.data.train.size() == 0) throw DataError(name + ": the training split has no samples");
  if (!spec.validation_split.empty()) {
    out.own_val_split = spec.validation_split;
    const std::string where = name + " validation split '" + out.own_val_split + "'";
    out.data.val = to_dataset(read.validation, read.num_classes, read.class_names, *known, where);
    if (out.data.val.size() == 0) throw DataError(where + ": no samples (a reader with a validation split must fill it)");
    if (out.data.val.sample_shape != out.data.train.sample_shape)
      throw DataError(name + ": the training samples are " + shape_text(out.data.train.sample_shape) + ", the " +
                      out.own_val_split + " samples " + shape_text(out.data.val.sample_shape));
    // No labels for the test split (TinyImageNet's): the val split is the only held-out one.
    out.test_unlabelled = !read.test.targets.defined();
  }
  if (out.test_unlabelled) {
    out.data.test = out.data.val;
    read.test_split = out.own_val_split;
  } else {
    out.data.test = to_dataset(read.test, read.num_classes, read.class_names, *known, name + " test split");
  }
  add_fields(out.data.train, read.train.fields, name + " training split");
  if (!out.test_unlabelled) add_fields(out.data.test, read.test.fields, name + " test split");
  const auto same_fields = [&](const Dataset& one, const Dataset& other, const std::string& first, const std::string& second) {
    for (const auto& [field, t] : one.fields)
      if (!other.fields.count(field))
        throw DataError(name + ": the " + first + " split has field '" + field + "', the " + second + " split has not");
  };
  same_fields(out.data.train, out.data.test, "training", "test");
  same_fields(out.data.test, out.data.train, "test", "training");
  if (out.data.train.sample_shape != out.data.test.sample_shape)
    throw DataError(name + ": the training samples are " + shape_text(out.data.train.sample_shape) +
                    ", the test samples " + shape_text(out.data.test.sample_shape));
  out.source = read.source.empty() ? spec.name : read.source;
  out.test_split = read.test_split.empty() ? "test" : read.test_split;
  out.cached = out.data.train.images.defined();
  out.notes = read.notes;
  if (!read.tokenizer_file.empty() && !spec.tokenizer)
    throw DataError(name + ": it names tokenizer file '" + read.tokenizer_file +
                    "' but registered no tokenizer opener");
  out.data.train.tokenizer_file = out.data.test.tokenizer_file = read.tokenizer_file;
  if (out.data.has_val()) out.data.val.tokenizer_file = read.tokenizer_file;
  return out;
}

}  // namespace plugtrain::data
