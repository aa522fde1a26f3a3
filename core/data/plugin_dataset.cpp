#include "data/plugin_dataset.h"

#include "data/data_error.h"
#include "data/target_kinds.h"
#include "util/format.h"
#include "util/text.h"

namespace plugtrain::data {

namespace {

// One split as the host's Dataset: inputs (N, C, H, W) bytes or floats in memory, or decoded
// on demand (a reader's split without inputs), and N targets of the kind.
Dataset to_dataset(const DatasetReadSplit& split, int64_t num_classes, const std::vector<std::string>& class_names,
                   TargetKind kind, const std::string& where) {
  const at::Tensor& x = split.inputs;
  const at::Tensor& y = split.targets;
  Dataset d;
  if (x.defined()) {
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
  if (x.defined() && y.size(0) != x.size(0))
    throw DataError(where + ": " + std::to_string(x.size(0)) + " inputs but " + std::to_string(y.size(0)) + " targets");
  const bool integral = kind == TargetKind::class_index || kind == TargetKind::pixel_class || kind == TargetKind::sequence;
  d.labels = (integral ? y.to(at::kCPU, at::kLong) : y.to(at::kCPU, at::kFloat)).contiguous();
  d.target_kind = kind;
  d.num_classes = num_classes;
  d.class_names = class_names;
  if (kind == TargetKind::class_index) check_labels(d.labels, d.num_classes, where);
  return d;
}

DatasetReadSplit as_read_split(const DatasetSplit& split) {
  DatasetReadSplit r;
  r.inputs = split.inputs;
  r.targets = split.targets;
  return r;
}

DatasetReadSettings read_settings(const DataOptions& o) {
  DatasetReadSettings s;
  s.image_size = o.image_size;
  s.cache = !o.cache ? -1 : *o.cache == ImageCache::none ? 0 : 1;
  s.decode_threads = o.decode_threads;
  s.skip_bad = o.skip_bad;
  s.task_targets = static_cast<DatasetTargets>(int(o.task_targets));  // the SDK keeps TargetKind's order
  return s;
}

// A split's named fields (SDK 3.6): N rows each; input_lengths int64 (N), each at least 1 (the
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
  const DatasetRequest request{o.path.string(), o.seed};
  DatasetRead read;
  DatasetFields fields;
  DatasetValidation validation;
  try {
    if (o.validation_reader) {
      read = (*o.validation_reader)(request, read_settings(o), o.dataset_options, validation);
    } else if (o.reader) {
      read = (*o.reader)(request, read_settings(o), o.dataset_options);
    } else {
      const LoadedDataset loaded =
          o.fields_factory ? (*o.fields_factory)(request, o.dataset_options, fields) : spec.factory(request, o.dataset_options);
      read.train = as_read_split(loaded.train);
      read.test = as_read_split(loaded.test);
      read.targets = spec.targets;
      read.num_classes = loaded.num_classes;
      read.class_names = loaded.class_names;
      read.source = loaded.source;
    }
  } catch (const std::exception& e) {
    throw DataError(name + ": " + first_line(e.what()));
  } catch (...) {
    throw DataError(name + ": it threw something that is not a std::exception");
  }
  const std::optional<TargetKind> known = target_kind_of(read.targets);
  if (!known) throw DataError(name + ": unknown kind of target " + std::to_string(int(read.targets)));
  const std::optional<TargetKind> wanted = spec.targets == DatasetTargets::as_task ? o.task_targets : target_kind_of(spec.targets);
  if (*known != wanted)
    throw DataError(name + ": it read " + describe(*known) + ", but " +
                    (spec.targets == DatasetTargets::as_task ? "the task learns " : "it registered ") +
                    (wanted ? describe(*wanted) : "an unknown kind"));
  LoadedData out;
  out.data.train = to_dataset(read.train, read.num_classes, read.class_names, *known, name + " training split");
  if (out.data.train.size() == 0) throw DataError(name + ": the training split has no samples");
  if (o.validation_reader) {
    out.own_val_split = validation.split.empty() ? "val" : validation.split;
    const std::string where = name + " validation split '" + out.own_val_split + "'";
    out.data.val = to_dataset(validation.val, read.num_classes, read.class_names, *known, where);
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
  add_fields(out.data.train, fields.train, name + " training split");
  add_fields(out.data.test, fields.test, name + " test split");
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
  return out;
}

}  // namespace plugtrain::data
