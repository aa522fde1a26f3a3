// A classification's confusion matrix (rows: the true class, columns: the predicted one, the
// argmax of the outputs), counted on the device batch by batch; each class's precision, recall,
// F1 and support from it; and the files `plugtrain evaluate` writes: confusion.csv,
// confusion.png (a heatmap) and per_class.csv.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include "data/image_codec.h"

namespace plugtrain {

class ConfusionCounter {
 public:
  ConfusionCounter(std::int64_t classes, c10::Device device);
  // outputs: (N, K) scores of any monotone form (logits, log-probabilities); targets: (N) classes.
  void add(const at::Tensor& outputs, const at::Tensor& targets);
  // int64 (K, K) on the CPU.
  at::Tensor counts() const;

 private:
  std::int64_t classes_;
  at::Tensor counts_;  // K * K, flat, on the device
};

struct ClassFigures {
  std::string name;
  double precision = 0;  // of the samples predicted as this class, how many are (0: none predicted)
  double recall = 0;     // of the samples of this class, how many were found (0: none in the split)
  double f1 = 0;         // their harmonic mean (0 when both are 0)
  std::int64_t support = 0;  // samples of this class in the split
};

// One row per class, in class order; `names` may be shorter than the classes (then "k").
std::vector<ClassFigures> class_figures(const at::Tensor& counts, const std::vector<std::string>& names);

// The unweighted mean of each figure over the classes that have samples ("macro avg"); its
// support is the number of samples.
ClassFigures macro_average(const std::vector<ClassFigures>& classes);

// The table `plugtrain evaluate` prints: class, precision, recall, f1, support, then the macro average.
std::string class_table_text(const std::vector<ClassFigures>& classes);

// Written atomically. confusion.csv: a header of the predicted classes, then one row per true
// class with its counts. per_class.csv: class,precision,recall,f1,support.
void write_confusion_csv(const std::filesystem::path& file, const at::Tensor& counts,
                         const std::vector<ClassFigures>& classes);
void write_class_figures_csv(const std::filesystem::path& file, const std::vector<ClassFigures>& classes);

// The matrix as a heatmap: one square cell per (true, predicted) pair, white for none and dark
// blue for all of the true class's samples (each row scaled by its support, so a rare class
// reads as clearly as a common one); rows labelled with the class names and columns with the
// class numbers when the cells are large enough for the letters.
data::Image confusion_image(const at::Tensor& counts, const std::vector<ClassFigures>& classes);

// "a,b" as one CSV field: quoted when it holds a comma, a quote or a line break.
std::string csv_field(const std::string& text);

}  // namespace plugtrain
