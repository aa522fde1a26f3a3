#include "task/task.h"

namespace plugtrain {

std::vector<std::string> monitor_names(const std::vector<TaskMetric>& training,
                                       const std::vector<TaskMetric>& evaluation) {
  std::vector<std::string> names = {"train_loss", "val_loss", "test_loss"};
  for (const auto& m : training) names.push_back("train_" + m.name);
  for (const char* split : {"val_", "test_"})
    for (const auto& m : evaluation) names.push_back(split + m.name);
  return names;
}

std::optional<Monitor> find_monitor(const std::vector<TaskMetric>& training, const std::vector<TaskMetric>& evaluation,
                                    const std::optional<std::string>& name, std::optional<Direction> mode,
                                    const std::string& split) {
  const std::string wanted = name.value_or(split + "_" + evaluation.front().name);
  std::optional<Direction> direction;
  if (wanted == "train_loss" || wanted == "val_loss" || wanted == "test_loss") direction = Direction::min;
  for (const auto& [prefix, metrics] : {std::pair{"train_", &training}, {"val_", &evaluation}, {"test_", &evaluation}})
    for (const auto& m : *metrics)
      if (wanted == prefix + m.name) direction = direction_of(m.goal);
  if (!direction) return std::nullopt;
  return Monitor{wanted, mode.value_or(*direction)};
}

}  // namespace plugtrain
