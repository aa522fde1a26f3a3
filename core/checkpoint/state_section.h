// One part's state in a checkpoint (Lightning's per-callback state_dict). Each stateful part of
// a run (the loop's counters, the sampler's position, the precision's loss scale, each callback)
// names a section and writes and reads its own values there; nothing else knows its keys. So a
// new callback with state adds no field anywhere else: it implements Stateful.
//
// Values are scalars (integer, real, flag, text). Tensors have sections of their own in the
// archive (model, optimizer, RNG: checkpoint.cpp).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <variant>
#include <vector>

namespace plugtrain {

class StateSection {
 public:
  using Value = std::variant<std::int64_t, double, bool, std::string>;

  // Keys are identifiers without a dot (the archive stores "state.<section>.<key>").
  void put_int(const std::string& key, std::int64_t value) { put(key, value); }
  void put_real(const std::string& key, double value) { put(key, value); }
  void put_flag(const std::string& key, bool value) { put(key, value); }
  void put_text(const std::string& key, std::string value) { put(key, std::move(value)); }

  // A missing key, or one of another type, throws CheckpointError naming the section and key.
  std::int64_t int_at(const std::string& key) const;
  double real_at(const std::string& key) const;
  bool flag_at(const std::string& key) const;
  const std::string& text_at(const std::string& key) const;

  bool has(const std::string& key) const { return values_.count(key) > 0; }
  bool empty() const { return values_.empty(); }
  const std::map<std::string, Value>& values() const { return values_; }

  explicit StateSection(std::string name = "") : name_(std::move(name)) {}
  const std::string& name() const { return name_; }

 private:
  void put(const std::string& key, Value value);
  template <typename T>
  const T& at(const std::string& key, const char* type) const;

  std::string name_;
  std::map<std::string, Value> values_;
};

// Every part's section of one checkpoint, by name.
class CheckpointState {
 public:
  // The section `name`, made empty when there is none yet (names as keys: no dot).
  StateSection& section(const std::string& name);
  // nullptr when the checkpoint has no such section (written before the part had state, or by
  // a run without that part): the part keeps its fresh state.
  const StateSection* find(const std::string& name) const;
  const std::map<std::string, StateSection>& sections() const { return sections_; }

 private:
  std::map<std::string, StateSection> sections_;
};

// A part of a run whose state a checkpoint keeps.
class Stateful {
 public:
  virtual ~Stateful() = default;
  virtual const char* state_name() const = 0;  // its section's name
  virtual void save_state(StateSection& out) const = 0;
  virtual void load_state(const StateSection& in) = 0;
};

// A section written and read by two functions: for state that is a few of its owner's fields.
class StateFunctions : public Stateful {
 public:
  StateFunctions(const char* name, std::function<void(StateSection&)> save, std::function<void(const StateSection&)> load)
      : name_(name), save_(std::move(save)), load_(std::move(load)) {}
  const char* state_name() const override { return name_; }
  void save_state(StateSection& out) const override { save_(out); }
  void load_state(const StateSection& in) override { load_(in); }

 private:
  const char* name_;
  std::function<void(StateSection&)> save_;
  std::function<void(const StateSection&)> load_;
};

// Each part writes its section of `state`; a part whose section is left empty stores none.
void save_parts(CheckpointState& state, const std::vector<Stateful*>& parts);
// Each part whose section `state` has reads it; the others keep their fresh state.
void load_parts(const CheckpointState& state, const std::vector<Stateful*>& parts);

}  // namespace plugtrain
