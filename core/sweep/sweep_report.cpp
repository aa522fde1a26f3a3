#include "sweep/sweep_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <ostream>
#include <sstream>

#include <boost/math/distributions/students_t.hpp>

#include "sweep/tensorboard_hparams.h"
#include "sweep/sweep_figure.h"
#include "util/atomic_file.h"
#include "util/error.h"
#include "util/format.h"
#include "util/text.h"

namespace plugtrain {

namespace {

std::string setting(const RunRecord& r, const std::string& key) {
  auto it = r.settings.find(key);
  if (it == r.settings.end()) return "";
  std::string v = it->second;
  if (v.size() >= 2 && v.front() == '"' && v.back() == '"') v = v.substr(1, v.size() - 2);
  return v;
}

// A CSV cell, quoted when it holds a comma, a quote or a line break (RFC 4180).
std::string csv_cell(const std::string& v) {
  if (v.find_first_of(",\"\n\r") == std::string::npos) return v;
  std::string out = "\"";
  for (char c : v) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string pm(const MeanStd& m, int digits) { return fixed(m.mean, digits) + " ± " + fixed(m.std, digits); }

std::string p_text(const std::optional<double>& p) {
  if (!p) return "—";
  char buf[32];
  std::snprintf(buf, sizeof buf, *p < 0.001 ? "%.1e" : "%.3f", *p);
  return buf;
}

std::string run_label(const RunRecord& r, const std::vector<std::string>& keys) {
  std::vector<std::string> parts;
  for (const auto& k : keys) parts.push_back(k + "=" + setting(r, k));
  return join(parts, ", ", "(all runs alike)");
}

template <class F>
std::vector<double> each(const RunGroup& g, F f) {
  std::vector<double> v;
  for (const RunRecord* r : g.runs) v.push_back(f(*r));
  return v;
}

}  // namespace

MeanStd mean_std(const std::vector<double>& values) {
  MeanStd m;
  if (values.empty()) return m;
  for (double v : values) m.mean += v;
  m.mean /= double(values.size());
  if (values.size() < 2) return m;
  double ss = 0;
  for (double v : values) ss += (v - m.mean) * (v - m.mean);
  m.std = std::sqrt(ss / double(values.size() - 1));
  return m;
}

std::optional<double> welch_p_value(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() < 2 || b.size() < 2) return std::nullopt;
  const MeanStd ma = mean_std(a), mb = mean_std(b);
  const double va = ma.std * ma.std / double(a.size()), vb = mb.std * mb.std / double(b.size());
  if (va + vb <= 0) return std::nullopt;
  const double t = (ma.mean - mb.mean) / std::sqrt(va + vb);
  // Welch–Satterthwaite degrees of freedom.
  const double df = (va + vb) * (va + vb) / (va * va / double(a.size() - 1) + vb * vb / double(b.size() - 1));
  const boost::math::students_t dist(df);
  return 2 * boost::math::cdf(boost::math::complement(dist, std::fabs(t)));
}

SweepReport build_report(const std::filesystem::path& root) {
  SweepReport report;
  report.runs = read_run_records(root);
  if (report.runs.empty()) throw Error(root.string() + ": no run with a summary.json below it");
  report.varied = varied_keys(report.runs);
  std::vector<std::string> group_keys;
  for (const auto& k : report.varied)
    if (k != "experiment.seed") group_keys.push_back(k);
  std::map<std::string, RunGroup> groups;
  for (const RunRecord& r : report.runs) {
    if (r.interrupted) continue;  // not finished: listed per run, kept out of the statistics
    RunGroup& g = groups[run_label(r, group_keys)];
    g.label = run_label(r, group_keys);
    g.runs.push_back(&r);
  }
  for (auto& [label, g] : groups) {
    g.best_metric = mean_std(each(g, [](const RunRecord& r) { return r.best_selected_metric; }));
    g.selected_metric = mean_std(each(g, [](const RunRecord& r) { return r.final_selected_metric; }));
    g.final_metric = mean_std(each(g, [](const RunRecord& r) { return r.final_test_metric; }));
    g.seconds_per_epoch = mean_std(each(g, [](const RunRecord& r) { return r.seconds_per_epoch; }));
    g.samples_per_second = mean_std(each(g, [](const RunRecord& r) { return r.samples_per_second; }));
    report.groups.push_back(g);
  }
  if (!report.runs.empty()) {
    report.metric = report.runs.front().metric;
    report.higher_is_better = report.runs.front().higher_is_better;
  }
  // One ranking needs one metric on one split: accuracy and MAE, or validation and test
  // figures, cannot be sorted together.
  for (const RunRecord& r : report.runs)
    if (r.selection_split != report.runs.front().selection_split)
      throw Error("the runs under " + root.string() + " select on different splits (" +
                  report.runs.front().selection_split + " in " + report.runs.front().folder.string() + ", " +
                  r.selection_split + " in " + r.folder.string() + "): report runs with and without a validation split apart");
  for (const RunRecord& r : report.runs)
    if (r.metric != report.metric)
      throw Error("the runs under " + root.string() + " have different headline metrics (" + report.metric + " in " +
                  report.runs.front().folder.string() + ", " + r.metric + " in " + r.folder.string() +
                  "): report each task's runs apart");
  // Best first in the metric's direction; a group whose metric is NaN (a diverged run) last.
  const double sign = report.higher_is_better ? 1 : -1;
  auto key = [&](const RunGroup& g) {
    // Ranked on the selection split: the test set chooses nothing where a validation split exists.
    return std::isnan(g.selected_metric.mean) ? -std::numeric_limits<double>::infinity() : sign * g.selected_metric.mean;
  };
  std::stable_sort(report.groups.begin(), report.groups.end(),
                   [&](const RunGroup& a, const RunGroup& b) { return key(a) > key(b); });
  if (!report.groups.empty()) {
    const auto best = each(report.groups.front(), [](const RunRecord& r) { return r.final_test_metric; });
    for (std::size_t i = 1; i < report.groups.size(); ++i)
      report.groups[i].p_value =
          welch_p_value(each(report.groups[i], [](const RunRecord& r) { return r.final_test_metric; }), best);
  }
  return report;
}

void write_report(const SweepReport& report, const std::filesystem::path& folder, std::ostream& out) {
  std::ostringstream md;
  const std::string m = report.metric == "accuracy" ? "acc" : report.metric;
  const std::string split = report.runs.empty() ? "test" : report.runs.front().selection_split;
  md << "## Groups (runs that differ only in their seed), best first by " << split << " " << report.metric
     << (report.higher_is_better ? " (higher is better)" : " (lower is better)") << "\n\n";
  if (!report.runs.empty() && report.runs.front().test_is_val)
    md << "The data set has no labelled test split: the \"final test\" metrics are on the val split that chose, not "
          "independent of the choice (data.val_fraction would keep them apart).\n\n";
  md << "| group | n | final test " << m << " | best " << split << " " << m << " | s/epoch | samples/s | p vs best (Welch) |\n"
     << "| --- | --- | --- | --- | --- | --- | --- |\n";
  for (const RunGroup& g : report.groups)
    md << "| " << g.label << " | " << g.runs.size() << " | " << pm(g.final_metric, 4) << " | "
       << pm(g.best_metric, 4) << " | " << pm(g.seconds_per_epoch, 2) << " | " << pm(g.samples_per_second, 0)
       << " | " << p_text(g.p_value) << " |\n";
  // Language models: bits per byte beside the headline, the figure that compares vocabularies.
  const bool per_byte = report.metric != "bits_per_byte" &&
                        std::any_of(report.runs.begin(), report.runs.end(),
                                    [](const RunRecord& r) { return !std::isnan(r.final_test_bits_per_byte); });
  md << "\n## Runs\n\n| run | ";
  for (const auto& k : report.varied) md << k << " | ";
  md << "final test " << m << " | " << (per_byte ? "final test bits_per_byte | " : "") << "best " << split << " " << m
     << " | final test loss | best test loss | epochs | time | s/epoch | samples/s | state |\n|";
  for (std::size_t i = 0; i < report.varied.size() + 10 + (per_byte ? 1 : 0); ++i) md << " --- |";
  md << "\n";
  std::ostringstream csv;
  csv << "run,";
  for (const auto& k : report.varied) csv << csv_cell(k) << ",";
  csv << "final_test_" << report.metric << (per_byte ? ",final_test_bits_per_byte" : "") << ",best_" << split << "_"
      << report.metric
      << ",final_test_loss,best_test_loss,epochs,seconds,seconds_per_epoch,samples_per_second,finished\n";
  for (const RunRecord& r : report.runs) {
    const std::string name = std::filesystem::relative(r.folder, folder).string();
    md << "| " << name << " | ";
    for (const auto& k : report.varied) md << setting(r, k) << " | ";
    md << fixed(r.final_test_metric, 4) << " | " << (per_byte ? fixed(r.final_test_bits_per_byte, 4) + " | " : "")
       << fixed(r.best_selected_metric, 4) << " | " << fixed(r.final_test_loss, 4) << " | "
       << fixed(r.best_test_loss, 4) << " | " << r.epochs << " | " << fixed(r.seconds, 1) << " s | "
       << fixed(r.seconds_per_epoch, 2) << " | " << fixed(r.samples_per_second, 0) << " | "
       << (r.paused        ? "paused"
           : r.interrupted ? "interrupted"
                           : "finished")
       << " |\n";
    csv << csv_cell(name) << ",";
    for (const auto& k : report.varied) csv << csv_cell(setting(r, k)) << ",";
    csv << r.final_test_metric << ",";
    if (per_byte) csv << r.final_test_bits_per_byte << ",";
    csv << r.best_selected_metric << "," << r.final_test_loss << "," << r.best_test_loss << "," << r.epochs << ","
        << r.seconds << "," << r.seconds_per_epoch << "," << r.samples_per_second << ","
        << (r.interrupted ? "false" : "true") << "\n";
  }
  write_file_atomically(folder / "sweep.md", md.str());
  write_file_atomically(folder / "sweep.csv", csv.str());
  write_file_atomically(folder / "sweep.svg", metric_figure_svg(report));
  write_hparams(report, folder);
  out << md.str() << "\nreport: " << (folder / "sweep.md").string() << ", sweep.csv, sweep.svg (TensorBoard: "
      << "tensorboard --logdir " << folder.string() << ", HPARAMS tab)\n";
}

}  // namespace plugtrain
