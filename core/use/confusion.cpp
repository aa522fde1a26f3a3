#include "use/confusion.h"

#include <algorithm>
#include <cstdio>

#include <ATen/ATen.h>

#include "describe/bitmap_font.h"
#include "util/atomic_file.h"
#include "util/format.h"

namespace plugtrain {

ConfusionCounter::ConfusionCounter(std::int64_t classes, c10::Device device)
    : classes_(classes), counts_(at::zeros({classes * classes}, at::TensorOptions().dtype(at::kLong).device(device))) {}

void ConfusionCounter::add(const at::Tensor& outputs, const at::Tensor& targets) {
  // On the device, without a read back: cell (true, predicted) is true * K + predicted.
  const at::Tensor cells = targets.to(at::kLong) * classes_ + outputs.argmax(1);
  counts_.index_add_(0, cells, at::ones_like(cells));
}

at::Tensor ConfusionCounter::counts() const { return counts_.view({classes_, classes_}).to(at::kCPU); }

std::vector<ClassFigures> class_figures(const at::Tensor& counts, const std::vector<std::string>& names) {
  const std::int64_t k = counts.size(0);
  const auto c = counts.accessor<std::int64_t, 2>();
  std::vector<ClassFigures> rows;
  for (std::int64_t i = 0; i < k; ++i) {
    std::int64_t predicted = 0;
    ClassFigures f;
    f.name = i < std::int64_t(names.size()) ? names[std::size_t(i)] : std::to_string(i);
    for (std::int64_t j = 0; j < k; ++j) {
      f.support += c[i][j];
      predicted += c[j][i];
    }
    const double hits = double(c[i][i]);
    f.precision = predicted > 0 ? hits / double(predicted) : 0;
    f.recall = f.support > 0 ? hits / double(f.support) : 0;
    f.f1 = f.precision + f.recall > 0 ? 2 * f.precision * f.recall / (f.precision + f.recall) : 0;
    rows.push_back(std::move(f));
  }
  return rows;
}

ClassFigures macro_average(const std::vector<ClassFigures>& classes) {
  ClassFigures mean;
  mean.name = "macro avg";
  std::int64_t present = 0;
  for (const ClassFigures& f : classes) {
    mean.support += f.support;
    if (f.support == 0) continue;  // a class absent from the split has no recall to average
    ++present;
    mean.precision += f.precision;
    mean.recall += f.recall;
    mean.f1 += f.f1;
  }
  if (present > 0) {
    mean.precision /= double(present);
    mean.recall /= double(present);
    mean.f1 /= double(present);
  }
  return mean;
}

std::string class_table_text(const std::vector<ClassFigures>& classes) {
  std::size_t width = std::string("macro avg").size();
  for (const ClassFigures& f : classes) width = std::max(width, f.name.size());
  width = std::min<std::size_t>(width, 40);
  auto row = [&](const std::string& name, const std::string& p, const std::string& r, const std::string& f1,
                 const std::string& support) {
    char line[256];
    std::snprintf(line, sizeof line, "%-*s  %9s  %6s  %6s  %7s\n", int(width), name.substr(0, width).c_str(), p.c_str(),
                  r.c_str(), f1.c_str(), support.c_str());
    return std::string(line);
  };
  std::string out = row("class", "precision", "recall", "f1", "support");
  auto figures = [&](const ClassFigures& f) {
    return row(f.name, fixed(f.precision, 4), fixed(f.recall, 4), fixed(f.f1, 4), std::to_string(f.support));
  };
  for (const ClassFigures& f : classes) out += figures(f);
  return out + figures(macro_average(classes));
}

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char ch : text) quoted += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return quoted + "\"";
}

void write_confusion_csv(const std::filesystem::path& file, const at::Tensor& counts,
                         const std::vector<ClassFigures>& classes) {
  const auto c = counts.accessor<std::int64_t, 2>();
  std::string out = "true\\predicted";
  for (const ClassFigures& f : classes) out += "," + csv_field(f.name);
  out += "\n";
  for (std::size_t i = 0; i < classes.size(); ++i) {
    out += csv_field(classes[i].name);
    for (std::size_t j = 0; j < classes.size(); ++j) out += "," + std::to_string(c[std::int64_t(i)][std::int64_t(j)]);
    out += "\n";
  }
  write_file_atomically(file, out);
}

void write_class_figures_csv(const std::filesystem::path& file, const std::vector<ClassFigures>& classes) {
  std::string out = "class,precision,recall,f1,support\n";
  char figures[128];
  for (const ClassFigures& f : classes) {
    std::snprintf(figures, sizeof figures, ",%.6f,%.6f,%.6f,%lld\n", f.precision, f.recall, f.f1,
                  static_cast<long long>(f.support));
    out += csv_field(f.name) + figures;
  }
  write_file_atomically(file, out);
}

data::Image confusion_image(const at::Tensor& counts, const std::vector<ClassFigures>& classes) {
  const int k = int(counts.size(0));
  const auto c = counts.accessor<std::int64_t, 2>();
  // Cells as large as reads well, the whole matrix at most about 640 pixels wide.
  const int cell = std::clamp(640 / std::max(1, k), 1, 32);
  const bool labels = cell >= kGlyphHeight + 2;
  // Rows: "3 Dress" (the number the column above carries, the name cut to 16 characters).
  std::vector<std::string> row_labels;
  std::size_t longest = std::string("true\\pred").size();
  for (int i = 0; i < k; ++i) {
    row_labels.push_back(std::to_string(i) + " " + classes[std::size_t(i)].name.substr(0, 16));
    longest = std::max(longest, row_labels.back().size());
  }
  const int left = labels ? int(longest) * kGlyphWidth + 6 : 0, top = labels ? kGlyphHeight + 6 : 0;
  data::Image image;
  image.width = left + k * cell + 1;
  image.height = top + k * cell + 1;
  image.channels = 3;
  image.pixels.assign(std::size_t(image.width) * std::size_t(image.height) * 3, 255);
  auto put = [&](int x, int y, uint8_t r, uint8_t g, uint8_t b) {
    uint8_t* p = &image.pixels[(std::size_t(y) * std::size_t(image.width) + std::size_t(x)) * 3];
    p[0] = r, p[1] = g, p[2] = b;
  };
  for (int i = 0; i < k; ++i) {
    const double support = double(std::max<std::int64_t>(1, classes[std::size_t(i)].support));
    for (int j = 0; j < k; ++j) {
      // White (none of the row's samples) to dark blue #08306b (all of them).
      const double share = double(c[i][j]) / support;
      const auto shade = [share](int dark) { return uint8_t(255 - share * (255 - dark) + 0.5); };
      for (int y = 0; y < cell; ++y)
        for (int x = 0; x < cell; ++x) put(left + j * cell + x, top + i * cell + y, shade(8), shade(48), shade(107));
    }
  }
  // A thin grey grid between cells large enough to have one.
  if (cell >= 6)
    for (int n = 0; n <= k; ++n)
      for (int t = 0; t <= k * cell; ++t) {
        put(left + n * cell, top + t, 200, 200, 200);
        put(left + t, top + n * cell, 200, 200, 200);
      }
  if (labels) {
    draw_text(image, 2, 2, "true\\pred", 0, 0, 0);
    for (int i = 0; i < k; ++i) {
      draw_text(image, 2, top + i * cell + (cell - kGlyphHeight) / 2, row_labels[std::size_t(i)], 0, 0, 0);
      const std::string number = std::to_string(i);
      const int width = int(number.size()) * kGlyphWidth;
      if (width <= cell) draw_text(image, left + i * cell + (cell - width) / 2, 3, number, 0, 0, 0);
    }
  }
  return image;
}

}  // namespace plugtrain
