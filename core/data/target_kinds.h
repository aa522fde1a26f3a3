// What each kind of target is, in words, and the kind a plugin's data set declares
// (plugtrain/dataset.h's DatasetTargets, which the SDK keeps in TargetKind's order).
#pragma once

#include <optional>

#include "data/dataset.h"
#include "plugtrain/dataset.h"

namespace plugtrain::data {

// "one class per sample", "a set of labels per sample", ...: for messages and listings.
const char* describe(TargetKind kind);

// Nullopt for a value outside the SDK's enum (a plugin built wrong).
std::optional<TargetKind> target_kind_of(DatasetTargets targets);

}  // namespace plugtrain::data
