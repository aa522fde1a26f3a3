#include "checkpoint/state_section.h"

#include <stdexcept>

#include "checkpoint/checkpoint_error.h"

namespace plugtrain {

namespace {

void check_name(const std::string& name, const char* what) {
  if (name.empty() || name.find('.') != std::string::npos)
    throw std::logic_error(std::string("checkpoint ") + what + " '" + name + "' must be a non-empty name without a dot");
}

}  // namespace

void StateSection::put(const std::string& key, Value value) {
  check_name(key, "key");
  values_[key] = std::move(value);
}

template <typename T>
const T& StateSection::at(const std::string& key, const char* type) const {
  const auto it = values_.find(key);
  if (it == values_.end()) throw CheckpointError("checkpoint section '" + name_ + "' has no '" + key + "'");
  if (const T* value = std::get_if<T>(&it->second)) return *value;
  throw CheckpointError("checkpoint section '" + name_ + "': '" + key + "' is not " + type);
}

std::int64_t StateSection::int_at(const std::string& key) const { return at<std::int64_t>(key, "an integer"); }
double StateSection::real_at(const std::string& key) const { return at<double>(key, "a number"); }
bool StateSection::flag_at(const std::string& key) const { return at<bool>(key, "true or false"); }
const std::string& StateSection::text_at(const std::string& key) const { return at<std::string>(key, "text"); }

StateSection& CheckpointState::section(const std::string& name) {
  check_name(name, "section");
  return sections_.try_emplace(name, name).first->second;
}

const StateSection* CheckpointState::find(const std::string& name) const {
  const auto it = sections_.find(name);
  return it == sections_.end() ? nullptr : &it->second;
}

void save_parts(CheckpointState& state, const std::vector<Stateful*>& parts) {
  for (const Stateful* part : parts) {
    StateSection written(part->state_name());
    part->save_state(written);
    if (!written.empty()) state.section(part->state_name()) = std::move(written);
  }
}

void load_parts(const CheckpointState& state, const std::vector<Stateful*>& parts) {
  for (Stateful* part : parts)
    if (const StateSection* saved = state.find(part->state_name())) part->load_state(*saved);
}

}  // namespace plugtrain
