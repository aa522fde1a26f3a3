// Expanding a [sweep] into its trials (sweep/sweep_spec.h): the grid's product or the random
// draws, each trial's folder name, and the `when` overrides that apply to it.
#include "sweep/sweep_spec.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <random>
#include <set>
#include <sstream>

#include "util/text.h"

namespace plugtrain {

namespace {

// A stable checksum for names cut short (the same in every build, so a resumed sweep finds its folders).
std::string fnv1a_hex(const std::string& s) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(fnv1a_64(s)));
  return buf;
}

std::string folder_safe(const std::string& s) {
  std::string out;
  for (char c : s) out += (std::isalnum(static_cast<unsigned char>(c)) || std::string("._=,+-").find(c) != std::string::npos) ? c : '_';
  return out;
}

}  // namespace

std::string plain_value(const std::string& toml_text) {
  if (toml_text.size() >= 2 && toml_text.front() == '"' && toml_text.back() == '"')
    return toml_text.substr(1, toml_text.size() - 2);
  return toml_text;
}

std::vector<std::string> Trial::set_arguments() const {
  std::vector<std::string> out;
  for (const auto& [k, v] : overrides) out.push_back(k + "=" + v);
  return out;
}

std::string Trial::label() const {
  std::vector<std::string> parts;
  for (const auto& [k, v] : overrides) parts.push_back(k + "=" + plain_value(v));
  return join(parts, ", ");
}

namespace {

using Axis = SweepSpec::Axis;

// Every combination of the axes' values, the last axis varying fastest.
std::vector<Trial> grid_trials(const std::vector<Axis>& axes) {
  std::vector<Trial> trials;
  std::vector<std::size_t> index(axes.size(), 0);
  for (;;) {
    Trial t;
    for (std::size_t a = 0; a < axes.size(); ++a) t.overrides.emplace_back(axes[a].key, axes[a].values[index[a]]);
    trials.push_back(std::move(t));
    std::size_t a = axes.size();
    while (a > 0 && ++index[a - 1] == axes[a - 1].values.size()) index[--a] = 0;
    if (a == 0) return trials;
  }
}

// One value of `axis` drawn from `rng`, as TOML text: a listed value, or a number from its distribution.
std::string draw_value(const Axis& axis, std::mt19937_64& rng) {
  if (!axis.distribution)
    return axis.values[std::uniform_int_distribution<std::size_t>(0, axis.values.size() - 1)(rng)];
  std::ostringstream v;
  v.precision(6);
  if (axis.distribution == Distribution::integer) {
    v << std::uniform_int_distribution<std::int64_t>(std::int64_t(std::ceil(axis.low)),
                                                     std::int64_t(std::floor(axis.high)))(rng);
  } else {
    const double u = std::uniform_real_distribution<double>(0.0, 1.0)(rng);
    const double x = axis.distribution == Distribution::uniform
                         ? axis.low + u * (axis.high - axis.low)
                         : std::exp(std::log(axis.low) + u * (std::log(axis.high) - std::log(axis.low)));
    v << std::scientific << x;
  }
  return v.str();
}

// `count` random draws, each repeated once per seed of `repeat_seeds` (when there are some).
std::vector<Trial> random_trials(const std::vector<Axis>& axes, std::int64_t count, std::int64_t seed,
                                 const std::vector<std::string>& repeat_seeds) {
  std::vector<Trial> trials;
  std::mt19937_64 rng(static_cast<std::uint64_t>(seed));
  for (std::int64_t i = 0; i < count; ++i) {
    Trial t;
    t.draw = i + 1;
    for (const Axis& axis : axes) t.overrides.emplace_back(axis.key, draw_value(axis, rng));
    if (repeat_seeds.empty()) {
      trials.push_back(std::move(t));
      continue;
    }
    for (const std::string& s : repeat_seeds) {
      Trial seeded = t;
      seeded.overrides.emplace_back("experiment.seed", s);
      trials.push_back(std::move(seeded));
    }
  }
  return trials;
}

// The trial's folder name from its values; `index` and `names` keep names that collide apart.
std::string trial_name(const Trial& t, std::size_t index, std::set<std::string>& names) {
  std::string name;
  for (const auto& [k, v] : t.overrides) name += (name.empty() ? "" : ",") + k + "=" + plain_value(v);
  // A random trial's values can repeat: the number of its draw keeps the folders apart.
  name = (t.draw > 0 ? "trial-" + std::to_string(t.draw) + "," : "") + folder_safe(name);
  // Folder names stay well under the file system's 255 bytes; the rest becomes a checksum.
  if (name.size() > 150) name = name.substr(0, 130) + "~" + fnv1a_hex(name);
  // Values that differ only in characters a folder name cannot hold (or a value listed twice).
  if (!names.insert(name).second) {
    name += ",trial-" + std::to_string(index + 1);
    names.insert(name);
  }
  return name;
}

}  // namespace

std::vector<Trial> SweepSpec::expand() const {
  std::vector<Trial> trials =
      method == SweepMethod::grid ? grid_trials(axes) : random_trials(axes, this->trials, seed, repeat_seeds);
  std::set<std::string> names;
  for (std::size_t i = 0; i < trials.size(); ++i) {
    Trial& t = trials[i];
    t.name = trial_name(t, i, names);
    const auto base = t.overrides;
    for (const When& rule : when)
      for (const auto& [k, v] : base)
        if (k == rule.key && v == rule.value)
          t.overrides.insert(t.overrides.end(), rule.overrides.begin(), rule.overrides.end());
  }
  return trials;
}

}  // namespace plugtrain
