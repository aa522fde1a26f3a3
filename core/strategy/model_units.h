// A model's units as the host sees them (plugtrain/units.h): each declared unit's parameters,
// found by its module name, and the root unit, every parameter outside them. A parameter
// shared by two units (tied weights) belongs to the first that has it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

#include "plugtrain/model.h"
#include "plugtrain/units.h"

namespace plugtrain {

struct UnitParameters {
  std::string name;                    // the module's name; "(root)" for the rest
  std::vector<at::Tensor> parameters;  // in the model's parameter order
  std::int64_t elements = 0;
};

struct UnitLayout {
  ModelUnits* declared = nullptr;     // null: the model declares none
  std::vector<UnitParameters> units;  // the declared units in forward order, then the root
  std::size_t root() const { return units.size() - 1; }
};

// The model's units. Throws Error naming the unit when a declared name is not a module of the
// model or has no parameters of its own.
UnitLayout unit_layout(Model& model);

// The units an "activation checkpointing" or "fsdp" line prints: "12 units (transformer.h.0 ..
// transformer.h.11, 0.20 M parameters each) and the root (1.6 M)".
std::string units_line(const UnitLayout& layout);

}  // namespace plugtrain
