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

namespace {

// Per group: epoch -> the metric of each of its runs.
using Curve = std::map<std::int64_t, std::vector<double>>;

// The plot's size, the epochs and metric range it shows, and where a point of it is drawn.
struct Frame {
  double left = 60, top = 30, bottom = 50, right = 200, width = 0, height = 0, plot_w = 0, plot_h = 0;
  std::int64_t max_epoch = 1;
  double lo = std::numeric_limits<double>::infinity(), hi = -std::numeric_limits<double>::infinity();

  double x(double epoch) const { return left + (max_epoch > 1 ? (epoch - 1) / double(max_epoch - 1) : 0.5) * plot_w; }
  double y(double value) const { return top + (1 - (value - lo) / (hi - lo)) * plot_h; }
};

Frame frame_for(const SweepReport& report, const std::vector<Curve>& curves) {
  Frame f;
  // Room on the right for the longest legend label (about 7 px a character at 12 px).
  std::size_t longest = 0;
  for (const RunGroup& g : report.groups) longest = std::max(longest, g.label.size() + 8);
  f.right = std::max(200.0, 7.0 * double(longest) + 60);
  f.height = std::max(420.0, 60 + 18.0 * double(report.groups.size()));
  f.width = 500 + f.right;
  f.plot_w = f.width - f.left - f.right;
  f.plot_h = f.height - f.top - f.bottom;
  for (const Curve& c : curves)
    for (const auto& [epoch, values] : c)
      for (double v : values) {
        f.max_epoch = std::max(f.max_epoch, epoch);
        f.lo = std::min(f.lo, v);
        f.hi = std::max(f.hi, v);
      }
  if (f.hi < f.lo) f.lo = 0, f.hi = 1;
  // Rates (accuracy, mAP, mIoU) stay within [0, 1]; other metrics (MAE, RMSE, a CER above 1)
  // take their own range, padded by a share of their size when the curves are flat.
  const bool rate = f.lo >= 0 && f.hi <= 1;
  const double pad =
      std::max(rate ? 0.01 : std::max(1e-6, 0.05 * std::max(std::abs(f.lo), std::abs(f.hi))), (f.hi - f.lo) * 0.1);
  f.lo = rate ? std::max(0.0, f.lo - pad) : f.lo - pad;
  f.hi = rate ? std::min(1.0, f.hi + pad) : f.hi + pad;
  return f;
}

// The title, both axes with their ticks and labels.
std::string axes_svg(const SweepReport& report, const Frame& f) {
  std::string svg = "<text x=\"" + number(f.left) + "\" y=\"18\" font-size=\"14\">test " + escape(report.metric) +
                    " by epoch (mean ± std over seeds" + (report.higher_is_better ? "" : "; lower is better") +
                    ")</text>\n";
  svg += "<g stroke=\"#444\"><line x1=\"" + number(f.left) + "\" y1=\"" + number(f.top + f.plot_h) + "\" x2=\"" +
         number(f.left + f.plot_w) + "\" y2=\"" + number(f.top + f.plot_h) + "\"/><line x1=\"" + number(f.left) +
         "\" y1=\"" + number(f.top) + "\" x2=\"" + number(f.left) + "\" y2=\"" + number(f.top + f.plot_h) +
         "\"/></g>\n";
  for (int i = 0; i <= 4; ++i) {
    const double value = f.lo + (f.hi - f.lo) * i / 4.0;
    char label[16];
    std::snprintf(label, sizeof label, "%.3f", value);
    svg += "<text x=\"" + number(f.left - 6) + "\" y=\"" + number(f.y(value) + 4) + "\" text-anchor=\"end\">" + label +
           "</text><line x1=\"" + number(f.left) + "\" y1=\"" + number(f.y(value)) + "\" x2=\"" +
           number(f.left + f.plot_w) + "\" y2=\"" + number(f.y(value)) + "\" stroke=\"#eee\"/>\n";
  }
  for (std::int64_t e = 1; e <= f.max_epoch; e += std::max<std::int64_t>(1, f.max_epoch / 8))
    svg += "<text x=\"" + number(f.x(double(e))) + "\" y=\"" + number(f.top + f.plot_h + 18) +
           "\" text-anchor=\"middle\">" + std::to_string(e) + "</text>\n";
  svg += "<text x=\"" + number(f.left + f.plot_w / 2) + "\" y=\"" + number(f.height - 10) +
         "\" text-anchor=\"middle\">epoch</text>\n";
  return svg;
}

// Group `g`'s mean line, its ± std band and its legend entry.
std::string group_svg(const SweepReport& report, std::size_t g, const Curve& curve, const Frame& f) {
  const char* colour = kColours[g % (sizeof kColours / sizeof *kColours)];
  std::string line, upper, lower;
  for (const auto& [epoch, values] : curve) {
    const MeanStd m = mean_std(values);
    line += number(f.x(double(epoch))) + "," + number(f.y(m.mean)) + " ";
    upper += number(f.x(double(epoch))) + "," + number(f.y(std::min(f.hi, m.mean + m.std))) + " ";
    lower = number(f.x(double(epoch))) + "," + number(f.y(std::max(f.lo, m.mean - m.std))) + " " + lower;
  }
  std::string svg =
      "<polygon points=\"" + upper + lower + "\" fill=\"" + colour + "\" fill-opacity=\"0.18\" stroke=\"none\"/>\n";
  svg += "<polyline points=\"" + line + "\" fill=\"none\" stroke=\"" + colour + "\" stroke-width=\"2\"/>\n";
  const double ly = f.top + 14 + 18 * double(g);
  svg += "<line x1=\"" + number(f.left + f.plot_w + 14) + "\" y1=\"" + number(ly - 4) + "\" x2=\"" +
         number(f.left + f.plot_w + 34) + "\" y2=\"" + number(ly - 4) + "\" stroke=\"" + colour +
         "\" stroke-width=\"3\"/><text x=\"" + number(f.left + f.plot_w + 40) + "\" y=\"" + number(ly) + "\">" +
         escape(report.groups[g].label) + " (n=" + std::to_string(report.groups[g].runs.size()) + ")</text>\n";
  return svg;
}

}  // namespace

std::string metric_figure_svg(const SweepReport& report) {
  std::vector<Curve> curves;
  for (const RunGroup& g : report.groups) {
    Curve c;
    for (const RunRecord* r : g.runs)
      for (const auto& [epoch, value] : r->test_metric) c[epoch].push_back(value);
    curves.push_back(std::move(c));
  }
  const Frame f = frame_for(report, curves);
  std::string svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + number(f.width) + "\" height=\"" +
                    number(f.height) + "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  svg += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  svg += axes_svg(report, f);
  for (std::size_t g = 0; g < curves.size(); ++g) svg += group_svg(report, g, curves[g], f);
  return svg + "</svg>\n";
}

}  // namespace plugtrain
