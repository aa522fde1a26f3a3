// sweep.svg: the test metric (the task's headline) against epoch, one mean line per group with a ±std band. Written
// as SVG text by hand: Debian has no C++ plotting library that writes a file without an
// external program (gnuplot-iostream drives the gnuplot binary), and the figure is a few
// polylines and polygons that any browser opens.
#pragma once

#include <string>

namespace plugtrain {

struct SweepReport;

std::string metric_figure_svg(const SweepReport& report);

}  // namespace plugtrain
