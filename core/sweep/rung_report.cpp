#include "sweep/rung_report.h"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <ostream>
#include <sstream>

#include "sweep/sweep_plan.h"
#include "util/text.h"

namespace plugtrain {

namespace fs = std::filesystem;

namespace {

std::string figure(double v) {
  if (std::isnan(v)) return "nan";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4f", v);
  return buf;
}

}  // namespace

std::string schedule_line(const RungSchedule& s) {
  std::vector<std::string> rungs;
  for (std::int64_t m : s.milestones(0)) rungs.push_back(std::to_string(m));
  const std::string last = rungs.back();
  rungs.pop_back();
  std::string line = std::string(word_of(s.kind)) + " on " + s.metric + " (" + word_of(s.maximise ? Direction::max : Direction::min) +
                     "): rungs at epochs " + join(rungs, ", ") + ", the best go on to " + last + "; reduction factor " +
                     std::to_string(s.reduction_factor);
  if (s.brackets > 1) line += "; " + std::to_string(s.brackets) + " brackets (bracket b starts at rung b)";
  return line;
}

std::string verdict_text(const RungSchedule& s, const TrialDecision& d, const TrialFiles& f) {
  const std::string rung = "rung " + std::to_string(d.rung + 1) + " (epoch " + std::to_string(d.rung_epoch);
  const std::optional<double> value = metric_at_rung(metric_values(f, s.metric), d.rung_epoch);
  const std::string at_rung = rung + (value ? ", " + s.metric + " " + figure(*value) : "") + ")";
  switch (d.verdict) {
    case TrialVerdict::run:
      return "to train to epoch " + std::to_string(d.until_epoch) + " (" + std::to_string(f.epochs_done) + " done)";
    case TrialVerdict::waiting: return "waiting at " + at_rung + " for the rung to be decided";
    case TrialVerdict::stopped: return "stopped at " + at_rung;
    case TrialVerdict::complete:
      return f.epochs_done < s.max_epochs ? "ended by its own early stopping after epoch " + std::to_string(f.epochs_done)
                                          : "trained all " + std::to_string(s.max_epochs) + " epochs" +
                                                (value ? " (" + s.metric + " " + figure(*value) + ")" : "");
    case TrialVerdict::failed: return "failed";
  }
  return "";
}

void write_rung_report(const fs::path& sweep_folder, std::ostream& out) {
  const std::optional<SweepManifest> manifest = read_sweep_manifest(sweep_folder);
  if (!manifest || manifest->schedule.kind == SweepScheduler::none) return;
  const RungSchedule& s = manifest->schedule;
  std::vector<TrialFiles> files;
  std::vector<TrialProgress> progress;
  std::int64_t trained = 0;
  for (const std::string& name : manifest->names) {
    files.push_back(read_trial_files(sweep_folder, name));
    progress.push_back(trial_progress(files.back(), s.metric, true));
    trained += files.back().epochs_done;
  }
  const std::vector<TrialDecision> decisions = decide_rungs(s, progress);
  std::ostringstream r;
  r << "## Early stopping: " << schedule_line(s) << "\n\n";
  r << "| bracket | rung | epoch | trials reached | went on |\n| --- | --- | --- | --- | --- |\n";
  for (std::int64_t b = 0; b < s.brackets; ++b) {
    const std::vector<std::int64_t> milestones = s.milestones(b);
    for (std::size_t k = 0; k < milestones.size(); ++k) {
      std::size_t reached = 0, went_on = 0;
      for (std::size_t i = 0; i < decisions.size(); ++i) {
        if (decisions[i].bracket != b || files[i].epochs_done < milestones[k]) continue;
        ++reached;
        went_on += decisions[i].rung > std::int64_t(k) ? 1 : 0;
      }
      const bool last = k + 1 == milestones.size();
      r << "| " << b << " | " << (last ? std::string("end") : std::to_string(k + 1)) << " | " << milestones[k] << " | "
        << reached << " | " << (last ? std::string("-") : std::to_string(went_on)) << " |\n";
    }
  }
  r << "\n| trial | verdict |\n| --- | --- |\n";
  for (std::size_t i = 0; i < decisions.size(); ++i)
    r << "| " << manifest->labels[i] << " | " << verdict_text(s, decisions[i], files[i]) << " |\n";
  const std::int64_t full = full_grid_epochs(s, manifest->names.size());
  char share[64];
  std::snprintf(share, sizeof share, "%.0f%%", full > 0 ? 100.0 * double(trained) / double(full) : 0.0);
  r << "\ncompute: " << trained << " epochs trained; the full grid trains " << full << " (" << share << ")\n";
  out << "\n" << r.str();
  if (fs::exists(sweep_folder / "sweep.md")) std::ofstream(sweep_folder / "sweep.md", std::ios::app) << "\n" << r.str();
}

}  // namespace plugtrain
