#include "run/fastest_backend.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>

#include <nlohmann/json.hpp>

#include "config/toml_text.h"
#include "run/step_bench.h"
#include "run/validate.h"
#include "util/atomic_file.h"
#include "util/error.h"
#include "util/text.h"
#include "version.h"

namespace plugtrain {

namespace fs = std::filesystem;

namespace {

fs::path cache_file() {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  const char* home = std::getenv("HOME");
  const fs::path base = xdg && *xdg ? fs::path(xdg) : fs::path(home && *home ? home : "/tmp") / ".cache";
  return base / "plugtrain" / "fastest.json";
}

// What makes a measurement valid again: this machine, this plugtrain, the candidates, and
// everything about the experiment that sets a step's cost.
std::string cache_key(const Experiment& e, const std::vector<std::string>& candidates) {
  char host[256] = "localhost";
  ::gethostname(host, sizeof host - 1);
  std::string options;
  for (const auto& [name, value] : e.model.options.values()) options += name + "=" + toml_text(value) + ";";
  std::string dataset_options;  // synthetic data's shape, for one
  for (const auto& [name, value] : e.data.dataset_options.values()) dataset_options += name + "=" + toml_text(value) + ";";
  return std::string(host) + "|plugtrain " PLUGTRAIN_VERSION "|" + join(candidates, ",") + "|" + e.model.name + "(" +
         options + ")|" + e.data.dataset_name + "(" + dataset_options + ")" +
         "|batch " + std::to_string(e.data.batch_size.value_or(0)) + "|" + word_of(e.train.precision) + "|" +
         word_of(e.optim.name) + "|threads " + std::to_string(e.train.threads);
}

nlohmann::json read_cache() {
  try {
    std::ifstream in(cache_file());
    if (in) return nlohmann::json::parse(in);
  } catch (const std::exception&) {  // a damaged cache is measured again, not an error
  }
  return nlohmann::json::object();
}

std::string speed(double samples_per_second) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f samples/s", samples_per_second);
  return buf;
}

}  // namespace

BackendChoice choose_fastest(const ValidatedRun& run, const SelectionLimits& limits) {
  const Experiment& e = run.experiment;
  BackendChoice choice;
  std::vector<std::string> candidates;
  for (const std::string& name : automatic_order(*run.host, e)) {
    Experiment named = e;
    named.backend.name = name;
    try {
      select_backend(*run.host, named, limits);  // usable and not disabled (the same checks as naming it)
      candidates.push_back(name);
    } catch (const std::exception& why) {
      choice.reasons.push_back("skipped " + name + ": " + first_line(why.what()));
    }
  }
  if (candidates.empty()) throw Error("select = \"fastest\": no usable backend; " + join(choice.reasons, "; "));

  const std::string key = cache_key(e, candidates);
  nlohmann::json cache = read_cache();
  if (!run.measure_again && cache.contains(key) && cache[key].contains("backend")) {
    const std::string best = cache[key]["backend"];
    if (BackendHandle* b = run.host->backend(best)) {
      choice.backend = b;
      choice.reasons.push_back("chose " + best + " (fastest of " + join(candidates) + ", measured before on this machine: " +
                               speed(cache[key].value("samples_per_second", 0.0)) +
                               "; --no-cache measures again)");
      return choice;
    }
  }
  BenchSettings quick;
  quick.warmup_steps = 3;
  quick.steps = 10;
  double best_speed = -1;
  std::string best;
  nlohmann::json figures = nlohmann::json::object();
  for (const std::string& name : candidates) {
    const BenchRow row = bench_backend(run, name, 0, quick, limits);
    if (!row.error.empty()) {
      choice.reasons.push_back("measured " + name + ": it failed: " + row.error);
      continue;
    }
    choice.reasons.push_back("measured " + name + ": " + speed(row.samples_per_second) + " (median of " +
                             std::to_string(quick.steps) + " steps)");
    figures[name] = row.samples_per_second;
    if (row.samples_per_second > best_speed) {
      best_speed = row.samples_per_second;
      best = name;
    }
  }
  if (best.empty()) throw Error("select = \"fastest\": no backend could train a step; " + join(choice.reasons, "; "));
  choice.backend = run.host->backend(best);
  choice.reasons.push_back("chose " + best + " (fastest of " + join(candidates) + ")");
  cache[key] = {{"backend", best}, {"samples_per_second", best_speed}, {"measured", figures}};
  try {
    fs::create_directories(cache_file().parent_path());
    write_file_atomically(cache_file(), cache.dump(2) + "\n");
  } catch (const std::exception&) {  // no cache: the next run measures again
  }
  return choice;
}

}  // namespace plugtrain
