#include "sweep/sweep_figure.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>

#include "sweep/sweep_report.h"

namespace plugtrain {

namespace {

// Colour-blind-safe palette (Okabe and Ito), cycled.
const char* const kColours[] = {"#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000"};

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else if (c == '&') out += "&amp;";
    else out += c;
  }
  return out;
}

}  // namespace

std::string metric_figure_svg(const SweepReport& report) {
  // Room on the right for the longest legend label (about 7 px a character at 12 px).
  std::size_t longest = 0;
  for (const RunGroup& g : report.groups) longest = std::max(longest, g.label.size() + 8);
  const double right = std::max(200.0, 7.0 * double(longest) + 60);
  const double height = std::max(420.0, 60 + 18.0 * double(report.groups.size())), left = 60, top = 30, bottom = 50;
  const double width = 500 + right;
  const double plot_w = width - left - right, plot_h = height - top - bottom;
  // Per group: epoch -> the metric of each of its runs.
  std::vector<std::map<std::int64_t, std::vector<double>>> curves;
  std::int64_t max_epoch = 1;
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (const RunGroup& g : report.groups) {
    std::map<std::int64_t, std::vector<double>> c;
    for (const RunRecord* r : g.runs)
      for (const auto& [epoch, acc] : r->test_metric) {
        c[epoch].push_back(acc);
        max_epoch = std::max(max_epoch, epoch);
        lo = std::min(lo, acc);
        hi = std::max(hi, acc);
      }
    curves.push_back(std::move(c));
  }
  if (hi < lo) lo = 0, hi = 1;
  // Rates (accuracy, mAP, mIoU) stay within [0, 1]; other metrics (MAE, RMSE, a CER above 1)
  // take their own range, padded by a share of their size when the curves are flat.
  const bool rate = lo >= 0 && hi <= 1;
  const double pad = std::max(rate ? 0.01 : std::max(1e-6, 0.05 * std::max(std::abs(lo), std::abs(hi))), (hi - lo) * 0.1);
  lo = rate ? std::max(0.0, lo - pad) : lo - pad;
  hi = rate ? std::min(1.0, hi + pad) : hi + pad;
  auto x = [&](double epoch) { return left + (max_epoch > 1 ? (epoch - 1) / double(max_epoch - 1) : 0.5) * plot_w; };
  auto y = [&](double acc) { return top + (1 - (acc - lo) / (hi - lo)) * plot_h; };

  std::string svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + number(width) + "\" height=\"" +
                    number(height) + "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  svg += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  svg += "<text x=\"" + number(left) + "\" y=\"18\" font-size=\"14\">test " + escape(report.metric) +
         " by epoch (mean ± std over seeds" + (report.higher_is_better ? "" : "; lower is better") + ")</text>\n";
  // Axes with five ticks each.
  svg += "<g stroke=\"#444\"><line x1=\"" + number(left) + "\" y1=\"" + number(top + plot_h) + "\" x2=\"" +
         number(left + plot_w) + "\" y2=\"" + number(top + plot_h) + "\"/><line x1=\"" + number(left) + "\" y1=\"" +
         number(top) + "\" x2=\"" + number(left) + "\" y2=\"" + number(top + plot_h) + "\"/></g>\n";
  for (int i = 0; i <= 4; ++i) {
    const double acc = lo + (hi - lo) * i / 4.0;
    char label[16];
    std::snprintf(label, sizeof label, "%.3f", acc);
    svg += "<text x=\"" + number(left - 6) + "\" y=\"" + number(y(acc) + 4) + "\" text-anchor=\"end\">" + label +
           "</text><line x1=\"" + number(left) + "\" y1=\"" + number(y(acc)) + "\" x2=\"" + number(left + plot_w) +
           "\" y2=\"" + number(y(acc)) + "\" stroke=\"#eee\"/>\n";
  }
  for (std::int64_t e = 1; e <= max_epoch; e += std::max<std::int64_t>(1, max_epoch / 8))
    svg += "<text x=\"" + number(x(double(e))) + "\" y=\"" + number(top + plot_h + 18) + "\" text-anchor=\"middle\">" +
           std::to_string(e) + "</text>\n";
  svg += "<text x=\"" + number(left + plot_w / 2) + "\" y=\"" + number(height - 10) + "\" text-anchor=\"middle\">epoch</text>\n";

  for (std::size_t g = 0; g < curves.size(); ++g) {
    const char* colour = kColours[g % (sizeof kColours / sizeof *kColours)];
    std::string line, upper, lower;
    for (const auto& [epoch, accs] : curves[g]) {
      const MeanStd m = mean_std(accs);
      line += number(x(double(epoch))) + "," + number(y(m.mean)) + " ";
      upper += number(x(double(epoch))) + "," + number(y(std::min(hi, m.mean + m.std))) + " ";
      lower = number(x(double(epoch))) + "," + number(y(std::max(lo, m.mean - m.std))) + " " + lower;
    }
    svg += "<polygon points=\"" + upper + lower + "\" fill=\"" + colour + "\" fill-opacity=\"0.18\" stroke=\"none\"/>\n";
    svg += "<polyline points=\"" + line + "\" fill=\"none\" stroke=\"" + colour + "\" stroke-width=\"2\"/>\n";
    const double ly = top + 14 + 18 * double(g);
    svg += "<line x1=\"" + number(left + plot_w + 14) + "\" y1=\"" + number(ly - 4) + "\" x2=\"" +
           number(left + plot_w + 34) + "\" y2=\"" + number(ly - 4) + "\" stroke=\"" + colour +
           "\" stroke-width=\"3\"/><text x=\"" + number(left + plot_w + 40) + "\" y=\"" + number(ly) + "\">" +
           escape(report.groups[g].label) + " (n=" + std::to_string(report.groups[g].runs.size()) + ")</text>\n";
  }
  return svg + "</svg>\n";
}

}  // namespace plugtrain
