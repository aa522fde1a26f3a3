#include "data/plugin_dataset.h"

#include "data/data_error.h"
#include "data/target_kinds.h"
#include "util/format.h"
#include "util/text.h"

namespace plugtrain::data {

namespace {

// One split as the host's Dataset: inputs (N, C, H, W) bytes or floats, N targets of the kind.
Dataset to_dataset(const DatasetSplit& split, const LoadedDataset& loaded, TargetKind kind, const std::string& where) {
  const at::Tensor& x = split.inputs;
  if (!x.defined() || x.dim() != 4 || (x.scalar_type() != at::kByte && x.scalar_type() != at::kFloat))
    throw DataError(where + ": inputs must be uint8 or float32 (N, C, H, W), got " +
                    (x.defined() ? std::string(c10::toString(x.scalar_type())) + " " + shape_text(x.sizes()) : "none"));
  const at::Tensor& y = split.targets;
  if (!y.defined() || y.dim() < 1 || y.size(0) != x.size(0))
    throw DataError(where + ": " + std::to_string(x.size(0)) + " inputs but " +
                    (y.defined() && y.dim() > 0 ? std::to_string(y.size(0)) : "no") + " targets");
  const bool integral = kind == TargetKind::class_index || kind == TargetKind::pixel_class || kind == TargetKind::sequence;
  Dataset d;
  d.images = x.to(at::kCPU).contiguous();
  d.labels = (integral ? y.to(at::kCPU, at::kLong) : y.to(at::kCPU, at::kFloat)).contiguous();
  d.target_kind = kind;
  d.num_classes = loaded.num_classes;
  d.class_names = loaded.class_names;
  d.sample_shape = {x.size(1), x.size(2), x.size(3)};
  if (kind == TargetKind::class_index) check_labels(d.labels, d.num_classes, where);
  return d;
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

LoadedData load_plugin_dataset(const DatasetSpec& spec, const DatasetFieldsFactory* fields_factory, const std::string& plugin,
                               const Options& options, const DatasetRequest& request) {
  const std::string name = "data set '" + spec.name + "' (plugin '" + plugin + "')";
  const std::optional<TargetKind> known = target_kind_of(spec.targets);
  if (!known) throw DataError(name + ": unknown kind of target " + std::to_string(int(spec.targets)));
  const TargetKind kind = *known;
  LoadedDataset loaded;
  DatasetFields fields;
  try {
    loaded = fields_factory ? (*fields_factory)(request, options, fields) : spec.factory(request, options);
  } catch (const std::exception& e) {
    throw DataError(name + ": " + first_line(e.what()));
  }
  LoadedData out;
  out.data.train = to_dataset(loaded.train, loaded, kind, name + " training split");
  out.data.test = to_dataset(loaded.test, loaded, kind, name + " test split");
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
  out.source = loaded.source.empty() ? spec.name : loaded.source;
  return out;
}

}  // namespace plugtrain::data
