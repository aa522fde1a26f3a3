#include "data/target_kinds.h"

namespace plugtrain::data {

static_assert(int(DatasetTargets::class_index) == int(TargetKind::class_index) &&
                  int(DatasetTargets::multi_hot) == int(TargetKind::multi_hot) &&
                  int(DatasetTargets::real) == int(TargetKind::real) &&
                  int(DatasetTargets::pixel_class) == int(TargetKind::pixel_class) &&
                  int(DatasetTargets::sequence) == int(TargetKind::sequence) &&
                  int(DatasetTargets::next_token) == int(TargetKind::next_token),
              "the SDK's DatasetTargets and the host's TargetKind must keep one order");

const char* describe(TargetKind kind) {
  switch (kind) {
    case TargetKind::class_index: return "one class per sample";
    case TargetKind::multi_hot: return "a set of labels per sample";
    case TargetKind::real: return "real values per sample";
    case TargetKind::pixel_class: return "a class per pixel";
    case TargetKind::sequence: return "a sequence of classes per sample";
    case TargetKind::next_token: return "the next token at every position";
  }
  return "?";
}

std::optional<TargetKind> target_kind_of(DatasetTargets targets) {
  if (targets == DatasetTargets::next_token) return TargetKind::next_token;
  if (int(targets) < 0 || int(targets) > int(DatasetTargets::sequence)) return std::nullopt;
  return static_cast<TargetKind>(int(targets));
}

}  // namespace plugtrain::data
