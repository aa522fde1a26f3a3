#include "sweep/sweep_spec.h"

#include <algorithm>
#include <cmath>
#include <functional>

#include "config/config_error.h"
#include "config/suggest.h"
#include "config/toml_text.h"
#include "config/toml_values.h"
#include "util/text.h"

namespace plugtrain {

namespace {

const char* const kReserved[] = {"method",       "trials", "samples", "seed",
                                 "repeat_seeds", "when",   "nodes",   "tasks_per_node"};

bool reserved(const std::string& key) {
  for (const char* r : kReserved)
    if (key == r) return true;
  return is_scheduler_key(key);
}

double number(const ExperimentFile& file, const toml::node& node, const std::string& what) {
  if (auto v = node.value<double>()) return *v;
  throw ConfigError(position(file, node) + ": " + what + " must be a number");
}

// A distribution for random search: { uniform = [a, b] }, { log_uniform = [a, b] }, { int = [a, b] }.
bool read_distribution(const ExperimentFile& file, const std::string& key, const toml::table& t, SweepSpec::Axis& axis) {
  if (t.size() != 1) return false;
  const auto first = t.begin();  // toml++ iterators hand out pairs that live inside them
  const std::string kind(first->first.str());
  const toml::node& node = first->second;
  if (kind == "choice") {  // { choice = [a, b, c] }: one of the values, as a plain list is
    const toml::array* values = node.as_array();
    if (!values || values->empty()) throw ConfigError(position(file, node) + ": sweep." + key + ".choice must list values");
    for (const toml::node& v : *values) axis.values.push_back(toml_text(v));
    return true;
  }
  const std::optional<Distribution> distribution = choice_named<Distribution>(kind);
  if (!distribution) return false;
  const toml::array* range = node.as_array();
  if (!range || range->size() != 2)
    throw ConfigError(position(file, node) + ": sweep." + key + "." + kind + " must be [low, high]");
  axis.distribution = distribution;
  axis.low = number(file, (*range)[0], "sweep." + key + "." + kind + " low");
  axis.high = number(file, (*range)[1], "sweep." + key + "." + kind + " high");
  if (!(axis.low < axis.high)) throw ConfigError(position(file, node) + ": sweep." + key + "." + kind + " needs low < high");
  if (distribution == Distribution::log_uniform && axis.low <= 0)
    throw ConfigError(position(file, node) + ": sweep." + key + ".log_uniform needs low > 0");
  if (distribution == Distribution::integer && std::ceil(axis.low) > std::floor(axis.high))
    throw ConfigError(position(file, node) + ": sweep." + key + ".int holds no integer");
  return true;
}

// Flattens dotted keys (optim.name = [...] is the table optim with key name) into paths.
void read_axes(const ExperimentFile& file, const toml::table& table, const std::string& prefix, SweepSpec& spec) {
  for (auto&& [k, node] : table) {
    const std::string name(k.str());
    if (prefix.empty() && reserved(name)) continue;
    const std::string key = prefix.empty() ? name : prefix + "." + name;
    SweepSpec::Axis axis;
    axis.key = key;
    axis.line = node.source().begin.line;
    axis.column = node.source().begin.column;
    if (const toml::array* values = node.as_array()) {
      if (values->empty()) throw ConfigError(position(file, node) + ": sweep." + key + " lists no value");
      for (const toml::node& v : *values) axis.values.push_back(toml_text(v));
    } else if (const toml::table* t = node.as_table()) {
      if (!read_distribution(file, key, *t, axis)) {
        // { loguniform = [a, b] } (an inline table, not dotted keys): a range with a misspelt kind.
        if (t->is_inline() && t->size() == 1 && t->begin()->second.is_array() &&
            t->begin()->second.as_array()->size() == 2) {
          const std::string kind(t->begin()->first.str());
          throw ConfigError(position(file, node) + ": sweep." + key + ": '" + kind + "' is not a range" +
                            did_you_mean(kind, {"uniform", "log_uniform", "int", "choice"}) +
                            "; write { uniform | log_uniform | int = [low, high] } or { choice = [values] }");
        }
        read_axes(file, *t, key, spec);
        continue;
      }
    } else {
      throw ConfigError(position(file, node) + ": sweep." + key +
                        " must be a list of values (or, with method = \"random\", { uniform | log_uniform | int = [low, high] })");
    }
    if (key.find('.') == std::string::npos)
      throw ConfigError(position(file, node) + ": sweep." + key + " is not a key path (write table.key, e.g. optim.lr)");
    spec.axes.push_back(std::move(axis));
  }
}

}  // namespace

bool has_sweep(const ExperimentFile& file) { return file.table.contains("sweep"); }

namespace {

// sweep.method, and sweep.trials (or samples) and sweep.seed, which belong to a random search.
void read_method(const ExperimentFile& file, const toml::node& node, const toml::table& sweep, SweepSpec& spec) {
  if (const toml::node* m = sweep.get("method")) {
    const std::optional<SweepMethod> method = choice_named<SweepMethod>(m->value_or(std::string()));
    if (!method) throw ConfigError(position(file, *m) + ": sweep.method must be \"grid\" or \"random\"");
    spec.method = *method;
  }
  if (sweep.contains("trials") && sweep.contains("samples"))
    throw ConfigError(position(file, *sweep.get("samples")) +
                      ": sweep.samples and sweep.trials are the same key: give one");
  for (const char* count : {"trials", "samples"})
    if (const toml::node* t = sweep.get(count)) {
      spec.trials = t->value_or(std::int64_t{0});
      if (spec.trials <= 0) throw ConfigError(position(file, *t) + ": sweep." + count + " must be a positive integer");
    }
  if (const toml::node* s = sweep.get("seed")) {
    if (!s->is_integer()) throw ConfigError(position(file, *s) + ": sweep.seed (the random draws' seed) must be an integer");
    spec.seed = s->value_or(std::int64_t{0});
  }
  if (spec.method == SweepMethod::random && spec.trials == 0)
    throw ConfigError(position(file, node) + ": sweep.method = \"random\" needs sweep.samples (how many draws)");
  for (const char* random_only : {"trials", "samples", "seed"})
    if (spec.method == SweepMethod::grid && sweep.contains(random_only))
      throw ConfigError(position(file, *sweep.get(random_only)) + ": sweep." + random_only +
                        " belongs to method = \"random\" (a grid trains every combination)");
}

// sweep.repeat_seeds: a grid's seed axis; a random search repeats each drawn trial with every seed.
void read_repeat_seeds(const ExperimentFile& file, const toml::table& sweep, SweepSpec& spec) {
  const toml::node* r = sweep.get("repeat_seeds");
  if (!r) return;
  const toml::array* seeds = r->as_array();
  if (!seeds || seeds->empty()) throw ConfigError(position(file, *r) + ": sweep.repeat_seeds must be a list of seeds");
  SweepSpec::Axis axis;
  axis.key = "experiment.seed";
  axis.line = r->source().begin.line;
  axis.column = r->source().begin.column;
  for (const toml::node& v : *seeds) {
    if (!v.is_integer()) throw ConfigError(position(file, v) + ": sweep.repeat_seeds holds integers");
    axis.values.push_back(toml_text(v));
  }
  if (spec.method == SweepMethod::random)
    spec.repeat_seeds = axis.values;
  else
    spec.axes.push_back(std::move(axis));
}

// sweep.nodes and sweep.tasks_per_node: how many Slurm nodes each trial trains across, and its
// ranks on each.
void read_trial_nodes(const ExperimentFile& file, const toml::table& sweep, SweepSpec& spec) {
  for (const char* key : {"nodes", "tasks_per_node"}) {
    const toml::node* n = sweep.get(key);
    if (!n) continue;
    const std::int64_t value = n->value_or(std::int64_t{0});
    if (!n->is_integer() || value < 1)
      throw ConfigError(
          position(file, *n) + ": sweep." + key + " must be a positive integer (" +
          (std::string(key) == "nodes" ? "the Slurm nodes each trial trains across" : "each trial's ranks on a node") +
          "), not " + toml_text(*n));
    (std::string(key) == "nodes" ? spec.nodes : spec.tasks_per_node) = value;
    if (std::string(key) == "nodes") spec.nodes_where = position(file, *n);
  }
  if (sweep.contains("tasks_per_node") && !sweep.contains("nodes"))
    throw ConfigError(position(file, *sweep.get("tasks_per_node")) +
                      ": sweep.tasks_per_node goes with sweep.nodes (the Slurm nodes each trial trains across)");
}

// The axes in the order the file lists them (toml++ keeps a table's keys sorted); each key varied
// once, and ranges for a random search only.
void order_and_check_axes(const ExperimentFile& file, const toml::node& node, SweepSpec& spec) {
  std::stable_sort(spec.axes.begin(), spec.axes.end(), [](const SweepSpec::Axis& a, const SweepSpec::Axis& b) {
    return std::make_pair(a.line, a.column) < std::make_pair(b.line, b.column);
  });
  auto where_axis = [&](const SweepSpec::Axis& a) {
    return file.source + ":" + std::to_string(a.line) + ":" + std::to_string(a.column);
  };
  for (std::size_t i = 0; i < spec.axes.size(); ++i) {
    const auto& a = spec.axes[i];
    if (a.distribution && spec.method != SweepMethod::random)
      throw ConfigError(where_axis(a) + ": sweep." + a.key + " is a range: only method = \"random\" draws from ranges");
    for (std::size_t j = 0; j < i; ++j)
      if (spec.axes[j].key == a.key)
        throw ConfigError(where_axis(a) + ": sweep." + a.key + " is varied twice (also at " + where_axis(spec.axes[j]) +
                          (a.key == "experiment.seed" ? "; repeat_seeds is experiment.seed" : "") + ")");
  }
  if (spec.axes.empty()) throw ConfigError(position(file, node) + ": [sweep] varies no key");
}

// One [sweep.when."key=value"] table: the keys it sets on the trials where key has that value.
SweepSpec::When read_when_rule(const ExperimentFile& file, const std::string& c, const toml::node& body,
                               const SweepSpec& spec) {
  const std::size_t eq = c.find('=');
  const toml::table* overrides = body.as_table();
  if (eq == std::string::npos || !overrides)
    throw ConfigError(position(file, body) + ": [sweep.when.\"" + c +
                      "\"] must be named key=value and hold keys to set");
  SweepSpec::When rule;
  rule.key = c.substr(0, eq);
  // The condition's value as TOML text: a bare word is a string (optim.name=sgd).
  std::string value = c.substr(eq + 1);
  try {
    toml::table parsed = toml::parse("v = " + value);
    value = toml_text(*parsed.get("v"));
  } catch (const toml::parse_error&) { value = toml_quoted(value); }
  rule.value = value;
  std::function<void(const toml::table&, const std::string&)> walk = [&](const toml::table& t, const std::string& p) {
    for (auto&& [k, n] : t) {
      const std::string key = p.empty() ? std::string(k.str()) : p + "." + std::string(k.str());
      if (const toml::table* sub = n.as_table())
        walk(*sub, key);
      else
        rule.overrides.emplace_back(key, toml_text(n));
    }
  };
  walk(*overrides, "");
  // The condition must be able to match, and must not set what the sweep varies.
  const auto axis = std::find_if(spec.axes.begin(), spec.axes.end(), [&](const auto& a) { return a.key == rule.key; });
  if (axis == spec.axes.end())
    throw ConfigError(position(file, body) + ": [sweep.when.\"" + c + "\"]: " + rule.key +
                      " is not varied by the sweep");
  if (std::find(axis->values.begin(), axis->values.end(), rule.value) == axis->values.end()) {
    std::vector<std::string> listed;
    for (const auto& v : axis->values) listed.push_back(plain_value(v));
    throw ConfigError(position(file, body) + ": [sweep.when.\"" + c + "\"] matches no trial: " + rule.key + " takes " +
                      join(listed, ", ", "values drawn from a range (a condition needs a listed value)"));
  }
  for (const auto& [k, v] : rule.overrides)
    if (std::any_of(spec.axes.begin(), spec.axes.end(), [&](const auto& a) { return a.key == k; }))
      throw ConfigError(position(file, body) + ": [sweep.when.\"" + c + "\"] sets " + k + ", which the sweep varies");
  return rule;
}

}  // namespace

SweepSpec read_sweep(const ExperimentFile& file) {
  SweepSpec spec;
  const toml::node* node = file.table.get("sweep");
  const toml::table* sweep = node ? node->as_table() : nullptr;
  if (!sweep) throw ConfigError(file.source + ": no [sweep] table (see docs/sweeps.md)");
  read_method(file, *node, *sweep, spec);
  read_scheduler(file, *sweep, spec.scheduler);
  read_axes(file, *sweep, "", spec);
  read_repeat_seeds(file, *sweep, spec);
  read_trial_nodes(file, *sweep, spec);
  order_and_check_axes(file, *node, spec);
  if (const toml::node* w = sweep->get("when")) {
    const toml::table* when = w->as_table();
    if (!when) throw ConfigError(position(file, *w) + ": sweep.when must be a table of \"key=value\" tables");
    for (auto&& [condition, body] : *when)
      spec.when.push_back(read_when_rule(file, std::string(condition.str()), body, spec));
  }
  return spec;
}

}  // namespace plugtrain
