// What each kind of target is, in words, and the kind a plugin's data set declares
// (plugtrain/dataset.h's DatasetTargets, which the SDK keeps in DatasetTargets's order).
#pragma once

#include <optional>

#include "data/dataset.h"
#include "plugtrain/dataset.h"

namespace plugtrain::data {

// "one class per sample", "a set of labels per sample", ...: for messages and listings.
const char* describe(DatasetTargets kind);

// The kind a sample's target is: `targets` itself, or nullopt for as_task (which names no kind
// of its own) and for a value outside the enum (a plugin built wrong).
std::optional<DatasetTargets> target_kind_of(DatasetTargets targets);

}  // namespace plugtrain::data
