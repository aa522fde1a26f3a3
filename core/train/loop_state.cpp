#include "train/loop_state.h"

#include <cstdio>
#include <cstdlib>

namespace plugtrain {

std::optional<double> EpochMetrics::metric(const std::string& name) const {
  if (name == "train_loss") return train_loss;
  if (name == "test_loss") return test_loss;
  if (name == "val_loss") return val_loss;
  for (const auto& [prefix, values] : {std::pair{"train_", &train}, {"test_", &test}, {"val_", &val}})
    for (const MetricValue& v : *values)
      if (name == prefix + v.name) return v.value;
  return std::nullopt;
}

void EpochSums::save_state(StateSection& out) const {
  out.put_real("loss_sum", loss_sum);
  out.put_int("seen", seen);
  std::string text;
  char number[32];
  for (double v : statistics) {
    std::snprintf(number, sizeof number, "%.17g", v);  // exact: a resumed epoch's figures are the same
    text += (text.empty() ? "" : ",") + std::string(number);
  }
  out.put_text("statistics", text);
}

void EpochSums::load_state(const StateSection& in) {
  loss_sum = in.real_at("loss_sum");
  seen = in.int_at("seen");
  statistics.clear();
  if (!in.has("statistics")) {  // before tasks: classification's count of correct samples
    statistics.push_back(double(in.int_at("correct")));
    return;
  }
  const std::string& text = in.text_at("statistics");
  for (std::size_t begin = 0; begin < text.size();) {
    std::size_t end = text.find(',', begin);
    if (end == std::string::npos) end = text.size();
    statistics.push_back(std::strtod(text.substr(begin, end - begin).c_str(), nullptr));
    begin = end + 1;
  }
}

void LoopState::save_state(StateSection& out) const {
  out.put_int("epochs_done", epochs_done);
  out.put_int("step", step);
  out.put_int("planned_step", planned_step);
  out.put_int("step_batch", step_batch);  // a resume keeps the batch an out-of-memory error forced
  out.put_flag("finished", finished);
}

void LoopState::load_state(const StateSection& in) {
  epochs_done = in.int_at("epochs_done");
  epoch = epochs_done;
  step = in.int_at("step");
  planned_step = in.int_at("planned_step");
  step_batch = in.int_at("step_batch");
  finished = in.flag_at("finished");
}

}  // namespace plugtrain
