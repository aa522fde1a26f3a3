#include "run/batch_search.h"

#include <algorithm>
#include <map>
#include <sstream>

#include <c10/util/Exception.h>

#include "run/plan.h"
#include "run/trial_steps.h"
#include "train/train_step.h"
#include "util/error.h"
#include "util/format.h"
#include "util/text.h"

namespace plugtrain {

namespace {

std::int64_t power_of_two_at_most(std::int64_t n) {
  std::int64_t p = 1;
  while (p * 2 <= n) p *= 2;
  return p;
}

std::int64_t power_of_two_at_least(std::int64_t n) {
  std::int64_t p = 1;
  while (p < n) p *= 2;
  return p;
}

// The run's trial steps on the plan's first device, as one process; candidate batches train on it.
class TrialRunner {
 public:
  TrialRunner(const ValidatedRun& run, const RunPlan& plan)
      : trial_(run, trial_plan(run, *plan.choice.backend, plan.devices.devices.at(0),
                               std::max<std::int64_t>(1, run.experiment.data.min_batch_size), /*graphs=*/false)),
        backend_(trial_.backend()),
        device_(trial_.device()) {}

  std::int64_t training_samples() const { return trial_.training_samples(); }
  MemoryInfo memory() const { return backend_.memory(device_); }
  bool resets_peak() const { return resets_peak_; }

  // Two steps: the first makes the optimizer's state, the second is a step as training has them.
  BatchTrial trial(std::int64_t batch, std::optional<std::uint64_t> budget) {
    BatchTrial t;
    t.batch = batch;
    resets_peak_ = backend_.reset_peak_memory(device_);
    try {
      trial_.time(2, batch);
    } catch (const c10::OutOfMemoryError& error) {
      t.why = "out of memory (" + first_line(error.what()) + ")";
    } catch (const OptimizerOutOfMemory&) {
      t.why = "out of memory in the optimizer step";
    }
    t.peak_bytes = memory().process_peak_bytes;
    backend_.release_cached_memory(device_);
    if (!t.why.empty()) return t;
    if (budget && t.peak_bytes && *t.peak_bytes > *budget) {
      t.why = "peak " + format_bytes(t.peak_bytes) + " over the budget";
      return t;
    }
    t.fits = true;
    return t;
  }

 private:
  TrialSteps trial_;
  BackendHandle& backend_;
  int device_;
  bool resets_peak_ = false;
};

// What this process may use: its own use now plus what is free, less the headroom; on the host
// CPU shared by `sharing` processes, its share.
std::optional<std::uint64_t> memory_budget(const MemoryInfo& m, double headroom, int sharing, std::string& how) {
  std::optional<std::uint64_t> capacity;
  if (m.free_bytes) {
    capacity = *m.free_bytes + m.process_used_bytes.value_or(0);
    how = "free + used by this process";
  } else if (m.total_bytes) {
    capacity = m.total_bytes;
    how = "the device's total";
  }
  if (!capacity) return std::nullopt;
  const double share = (1.0 - headroom) / double(std::max(1, sharing));
  if (sharing > 1) how += ", shared by " + std::to_string(sharing) + " processes";
  return std::uint64_t(double(*capacity) * share);
}

std::string trial_text(const BatchTrial& t) {
  std::string s = std::to_string(t.batch) + (t.fits ? " fits" : " does not fit");
  if (!t.fits) return s + " (" + t.why + ")";
  if (t.peak_bytes) s += " (peak " + format_bytes(t.peak_bytes) + ")";
  return s;
}

std::string tried(const std::vector<BatchTrial>& trials, const std::string& separator) {
  std::vector<std::string> texts;
  for (const auto& t : trials) texts.push_back(trial_text(t));
  return join(texts, separator);
}

// The memory the trials may use on `device`, and the search's first line about it.
std::optional<std::uint64_t> budget(const Experiment& e, const RunPlan& plan, TrialRunner& runner,
                                    const std::string& device, std::vector<std::string>& lines) {
  // On the host CPU, the ranks a local launcher starts share one memory.
  const int sharing = plan.capabilities.host_cpu ? plan.processes : 1;
  std::string how;
  const MemoryInfo before = runner.memory();
  const std::optional<std::uint64_t> bytes = memory_budget(before, e.data.memory_headroom, sharing, how);
  if (bytes)
    lines.push_back("auto: memory budget " + format_bytes(*bytes) + " on " + device + " (" +
                    fixed(100 * (1 - e.data.memory_headroom), 0) + "% of " + how + ")");
  else
    lines.push_back("auto: " + device + " does not say how much memory it has (" + before.note +
                    "); only out-of-memory errors limit the search");
  return bytes;
}

// The powers of two the search tries, each trial run once and remembered.
class PowerOfTwoSearch {
 public:
  PowerOfTwoSearch(TrialRunner& runner, BatchSearch& search) : runner_(runner), search_(search) {}

  bool fits(std::int64_t b) {
    auto it = done_.find(b);
    if (it == done_.end()) {
      it = done_.emplace(b, runner_.trial(b, search_.budget_bytes)).first;
      search_.trials.push_back(it->second);
    }
    return it->second.fits;
  }
  const BatchTrial& trial(std::int64_t b) const { return done_.at(b); }

  // `good` fits, `bad` does not (both powers of two): the largest fitting one between them.
  std::int64_t narrow(std::int64_t good, std::int64_t bad) {
    while (bad / good > 2) {
      std::int64_t mid = good;
      while (mid * mid < good * bad) mid *= 2;  // the geometric middle, a power of two
      (fits(mid) ? good : bad) = mid;
    }
    return good;
  }

  // Both `a` and `b` > a fit. Memory grows about linearly with the batch: the largest that
  // should fit is predicted from their peaks, then tried, and the search goes on from there.
  std::int64_t beyond(std::int64_t a, std::int64_t b, std::int64_t top) {
    std::int64_t guess = top;
    const BatchTrial &ta = trial(a), &tb = trial(b);
    if (search_.budget_bytes && ta.peak_bytes && tb.peak_bytes && *tb.peak_bytes > *ta.peak_bytes) {
      const double per_sample = double(*tb.peak_bytes - *ta.peak_bytes) / double(b - a);
      const double room = double(*search_.budget_bytes) - double(*tb.peak_bytes);
      const double predicted = double(b) + std::max(0.0, room) / per_sample;
      guess = std::clamp<std::int64_t>(power_of_two_at_most(std::int64_t(std::min(predicted, double(top)))), b, top);
      search_.lines.push_back("auto: about " + format_bytes(std::uint64_t(per_sample)) + " per sample; predicted " +
                              std::to_string(guess));
    }
    if (!fits(guess)) return narrow(b, guess);
    std::int64_t chosen = guess;
    while (chosen < top && fits(chosen * 2)) chosen *= 2;
    return chosen;
  }

 private:
  TrialRunner& runner_;
  BatchSearch& search_;
  std::map<std::int64_t, BatchTrial> done_;
};

}  // namespace

BatchSearch search_batch_size(const ValidatedRun& run, const RunPlan& plan) {
  const Experiment& e = run.experiment;
  BatchSearch search;
  TrialRunner runner(run, plan);
  const std::string device = plan.choice.backend->name() + ":" + std::to_string(plan.devices.devices.at(0));
  search.budget_bytes = budget(e, plan, runner, device, search.lines);

  const std::int64_t per_device_samples = runner.training_samples() / std::max<std::int64_t>(1, plan.devices_used);
  const std::int64_t cap = std::min(e.data.max_batch_size, per_device_samples);
  const std::string cap_reason = e.data.max_batch_size <= per_device_samples
                                     ? "data.max_batch_size " + std::to_string(e.data.max_batch_size)
                                     : std::to_string(per_device_samples) + " training samples per device";
  const std::int64_t top = power_of_two_at_most(std::max<std::int64_t>(1, cap));
  const std::int64_t bottom = std::min(top, power_of_two_at_least(std::max<std::int64_t>(1, e.data.min_batch_size)));

  // Two first trials, 8 and 32 (within the bounds), then down, between, or beyond them.
  PowerOfTwoSearch powers(runner, search);
  const std::int64_t a = std::clamp<std::int64_t>(8, bottom, top);
  const std::int64_t b = std::min(top, a * 4);
  std::int64_t chosen = 0;
  if (!powers.fits(a)) {
    if (a == bottom || !powers.fits(bottom))
      throw Error("data.batch_size = \"auto\": not even " + std::to_string(bottom) + " samples per step fit on " + device +
                  " (" + tried(search.trials, "; ") + ")");
    chosen = powers.narrow(bottom, a);
  } else if (b == a) {
    chosen = a;
  } else {
    chosen = powers.fits(b) ? powers.beyond(a, b, top) : powers.narrow(a, b);
  }
  search.chosen = chosen;

  search.lines.push_back("auto: tried " + tried(search.trials, ", "));
  if (!runner.resets_peak() && search.budget_bytes)
    search.lines.push_back("auto: " + plan.choice.backend->name() +
                           " cannot reset its peak memory figure, so each trial's peak includes the earlier ones");
  const std::string why = chosen == top ? "the largest power of two up to " + cap_reason
                                        : "the largest power of two whose trial steps fit";
  search.lines.push_back("auto: chose " + std::to_string(chosen) + " per device (" + why + ")");
  return search;
}

}  // namespace plugtrain
