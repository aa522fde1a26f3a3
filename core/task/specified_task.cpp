#include "task/builtin_tasks.h"

#include "util/error.h"
#include "util/format.h"

namespace plugtrain {

void SpecifiedTask::check_outputs(const at::Tensor& outputs, const at::Tensor& targets, bool same_shape) const {
  const bool fits = same_shape ? outputs.numel() == targets.numel() && outputs.size(0) == targets.size(0)
                               : outputs.dim() == targets.dim() + 1 && outputs.size(0) == targets.size(0);
  if (!fits)
    throw Error("task '" + name_ + "': the model outputs " + shape_text(outputs.sizes()) + " for a batch whose targets are " +
                shape_text(targets.sizes()) + (same_shape ? " (they must have as many values)" : " (outputs need one more dimension, the classes')"));
}

std::vector<MetricValue> named_per_class(const std::string& metric, const std::vector<double>& values,
                                         const std::vector<std::string>& names) {
  std::vector<MetricValue> out;
  for (std::size_t c = 0; c < values.size(); ++c) {
    if (values[c] < 0) continue;
    const std::string label = c < names.size() && !names[c].empty() ? names[c] : std::to_string(c);
    out.push_back({metric + "/" + label, values[c]});
  }
  return out;
}

double mean_of_measured(const std::vector<double>& values) {
  double sum = 0;
  std::int64_t measured = 0;
  for (double v : values)
    if (v >= 0) {
      sum += v;
      ++measured;
    }
  return measured > 0 ? sum / double(measured) : 0;
}

}  // namespace plugtrain
