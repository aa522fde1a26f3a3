#include "strategy/model_units.h"

#include <cstdio>
#include <map>
#include <set>

#include "util/error.h"

namespace plugtrain {

namespace {

ModelUnits* declared_units(Model& model) { return static_cast<ModelUnits*>(model.extension(kUnitsExtension, 1)); }

std::string millions(std::int64_t n) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f M", double(n) / 1e6);
  return text;
}

}  // namespace

UnitLayout unit_layout(Model& model) {
  UnitLayout layout;
  layout.declared = declared_units(model);
  std::map<std::string, std::shared_ptr<torch::nn::Module>> modules;
  for (const auto& item : model.named_modules("", /*include_self=*/false)) modules[item.key()] = item.value();
  // A parameter registered under two names (a tied weight) is used in two places: it stays in
  // the root, gathered for the whole step, whichever unit declares it.
  std::map<const void*, int> names;
  for (const auto& item : model.named_parameters(/*recurse=*/true)) ++names[item.value().unsafeGetTensorImpl()];
  std::set<const void*> taken;
  for (const auto& [impl, count] : names)
    if (count > 1) taken.insert(impl);
  auto add = [&](UnitParameters& unit, const at::Tensor& p) {
    if (!taken.insert(p.unsafeGetTensorImpl()).second) return;
    unit.parameters.push_back(p);
    unit.elements += p.numel();
  };
  if (layout.declared) {
    for (const std::string& name : layout.declared->names()) {
      const auto found = modules.find(name);
      if (found == modules.end()) throw Error("the model declares a unit '" + name + "', which is none of its modules");
      UnitParameters unit{name, {}, 0};
      for (const at::Tensor& p : found->second->parameters()) add(unit, p);
      if (unit.parameters.empty()) throw Error("the model's unit '" + name + "' has no parameters of its own");
      layout.units.push_back(std::move(unit));
    }
  }
  UnitParameters root{"(root)", {}, 0};
  for (const auto& [impl, count] : names)
    if (count > 1) taken.erase(impl);
  for (const at::Tensor& p : model.parameters()) add(root, p);
  layout.units.push_back(std::move(root));
  return layout;
}

std::string units_line(const UnitLayout& layout) {
  const std::size_t declared = layout.root();
  std::string line;
  if (declared == 0) {
    line = "no units declared: the whole model is one unit";
  } else {
    std::int64_t smallest = layout.units[0].elements, largest = smallest;
    for (std::size_t i = 0; i < declared; ++i) {
      smallest = std::min(smallest, layout.units[i].elements);
      largest = std::max(largest, layout.units[i].elements);
    }
    line = std::to_string(declared) + " unit" + (declared == 1 ? "" : "s") + " (" + layout.units[0].name +
           (declared > 1 ? " .. " + layout.units[declared - 1].name : std::string()) + ", " +
           (smallest == largest ? millions(largest) + " parameters each"
                                : millions(smallest) + " to " + millions(largest) + " parameters") +
           ")";
  }
  return line + " and the root (" + millions(layout.units.back().elements) + ")";
}

}  // namespace plugtrain
