#include "sweep/rung_scheduler.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace plugtrain {

std::optional<double> metric_at_rung(const std::map<std::int64_t, double>& values, std::int64_t epoch) {
  auto it = values.upper_bound(epoch);
  if (it == values.begin()) return std::nullopt;
  return std::prev(it)->second;
}

std::vector<std::int64_t> RungSchedule::milestones(std::int64_t bracket) const {
  std::vector<std::int64_t> out;
  if (kind != SweepScheduler::none) {
    std::int64_t r = min_epochs;
    for (std::int64_t s = 0; s < bracket && r < max_epochs; ++s) r *= reduction_factor;
    for (; r < max_epochs; r *= reduction_factor) out.push_back(r);
  }
  out.push_back(max_epochs);
  return out;
}

std::vector<std::int64_t> RungSchedule::bracket_of_trials(std::size_t trials) const {
  std::vector<std::int64_t> out(trials, 0);
  if (kind != SweepScheduler::hyperband || brackets <= 1) return out;
  // Hyperband's n_s ∝ η^s/(s+1) for a bracket of s halvings, dealt by smooth weighted
  // round-robin so that neighbouring trials of a grid (sgd, seed 1, 2, 3) spread over brackets.
  std::vector<double> weight, current(std::size_t(brackets), 0.0);
  for (std::int64_t b = 0; b < brackets; ++b) {
    const double halvings = double(milestones(b).size() - 1);
    weight.push_back(std::pow(double(reduction_factor), halvings) / (halvings + 1));
  }
  const double total = std::accumulate(weight.begin(), weight.end(), 0.0);
  for (std::size_t i = 0; i < trials; ++i) {
    for (std::size_t b = 0; b < weight.size(); ++b) current[b] += weight[b];
    const std::size_t pick = std::size_t(std::max_element(current.begin(), current.end()) - current.begin());
    current[pick] -= total;
    out[i] = std::int64_t(pick);
  }
  return out;
}

std::vector<TrialDecision> decide_rungs(const RungSchedule& schedule, const std::vector<TrialProgress>& progress) {
  std::vector<TrialDecision> out(progress.size());
  const std::vector<std::int64_t> bracket = schedule.bracket_of_trials(progress.size());
  for (std::int64_t b = 0; b < std::max<std::int64_t>(1, schedule.brackets); ++b) {
    const std::vector<std::int64_t> milestones = schedule.milestones(b);
    // Failed trials stay in the rungs they reached: they count there, so a failure later never
    // reopens a rung already decided.
    std::vector<std::size_t> alive;
    for (std::size_t i = 0; i < progress.size(); ++i) {
      if (bracket[i] != b) continue;
      out[i].bracket = b;
      alive.push_back(i);
    }
    for (std::size_t k = 0; k < milestones.size() && !alive.empty(); ++k) {
      const std::int64_t m = milestones[k];
      std::vector<std::size_t> here, behind;
      for (std::size_t i : alive) {
        out[i].rung = std::int64_t(k);
        out[i].rung_epoch = m;
        if (progress[i].epochs_done >= m) here.push_back(i);
        else if (progress[i].failed) out[i].verdict = TrialVerdict::failed;
        else if (progress[i].ended) out[i].verdict = TrialVerdict::complete;  // its own early stopping ended it
        else behind.push_back(i);
      }
      if (!behind.empty()) {
        for (std::size_t i : behind) out[i] = {TrialVerdict::run, m, b, std::int64_t(k), m};
        for (std::size_t i : here) out[i].verdict = progress[i].failed ? TrialVerdict::failed : TrialVerdict::waiting;
        break;
      }
      const bool last = k + 1 == milestones.size();
      for (std::size_t i : here) out[i].verdict = progress[i].failed ? TrialVerdict::failed : TrialVerdict::complete;
      if (last || here.empty()) break;
      // Best first; NaN (diverged, or never evaluated) last; ties by trial order.
      std::stable_sort(here.begin(), here.end(), [&](std::size_t x, std::size_t y) {
        const double nan = std::numeric_limits<double>::quiet_NaN();
        const double a = metric_at_rung(progress[x].metric, m).value_or(nan);
        const double c = metric_at_rung(progress[y].metric, m).value_or(nan);
        if (std::isnan(a) || std::isnan(c)) return !std::isnan(a) && std::isnan(c);
        return schedule.maximise ? a > c : a < c;
      });
      // The best ⌊n/η⌋ of the n trials here (at least one) go on. A failed trial, or one its own
      // early stopping ended, keeps its place: it reached the rung, and a failure after a
      // promotion must not reopen a rung already decided (and trained on).
      const std::size_t keep = std::max<std::size_t>(1, here.size() / std::size_t(schedule.reduction_factor));
      const std::vector<std::size_t> promoted(here.begin(), here.begin() + std::ptrdiff_t(std::min(keep, here.size())));
      for (std::size_t j = keep; j < here.size(); ++j)
        if (out[here[j]].verdict == TrialVerdict::complete && !progress[here[j]].ended)
          out[here[j]].verdict = TrialVerdict::stopped;
      alive = promoted;
    }
  }
  return out;
}

std::int64_t full_grid_epochs(const RungSchedule& schedule, std::size_t trials) {
  return schedule.max_epochs * std::int64_t(trials);
}

}  // namespace plugtrain
