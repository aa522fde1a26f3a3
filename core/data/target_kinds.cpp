#include "data/target_kinds.h"

namespace plugtrain::data {

const char* describe(DatasetTargets kind) {
  switch (kind) {
    case DatasetTargets::class_index: return "one class per sample";
    case DatasetTargets::multi_hot: return "a set of labels per sample";
    case DatasetTargets::real: return "real values per sample";
    case DatasetTargets::pixel_class: return "a class per pixel";
    case DatasetTargets::sequence: return "a sequence of classes per sample";
    case DatasetTargets::next_token: return "the next token at every position";
    case DatasetTargets::as_task: return "the kind the run's task learns";
  }
  return "?";
}

std::optional<DatasetTargets> target_kind_of(DatasetTargets targets) {
  switch (targets) {
    case DatasetTargets::class_index:
    case DatasetTargets::multi_hot:
    case DatasetTargets::real:
    case DatasetTargets::pixel_class:
    case DatasetTargets::sequence:
    case DatasetTargets::next_token: return targets;
    case DatasetTargets::as_task: break;
  }
  return std::nullopt;
}

}  // namespace plugtrain::data
