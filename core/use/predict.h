// `plugtrain predict`: a trained classifier's most probable classes for image files. The model
// is built and loaded as `plugtrain evaluate` does, but no data set is read: the class names
// and the sample shape come from the run folder's classes.json, the statistics from its
// normalization.json (or the experiment's data.mean/std, or none, as the run normalised).
// Each image is made a sample as the run's were — its channels (1: grayscale, 3: RGB), its
// height and width — and goes through the same loader, so its normalisation is the
// evaluation's, value for value.
#pragma once

#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <string>
#include <vector>

#include "data/image_codec.h"
#include "use/trained_run.h"

namespace plugtrain {

struct PredictRequest {
  TrainedRunRequest source;  // a run folder, or a checkpoint in one
  std::vector<std::filesystem::path> images;
  std::int64_t top_k = 5;
};

struct ClassProbability {
  std::int64_t index = 0;
  std::string name;
  double probability = 0;  // softmax of the outputs
};

struct ImagePrediction {
  std::filesystem::path image;
  std::vector<ClassProbability> top;  // most probable first
};

// Throws Error naming the file for an image that cannot be read or decoded (before any model
// work), and for a run whose task does not predict one class per image.
std::vector<ImagePrediction> predict_images(const PredictRequest& request, std::ostream& log);

// "shirt.png: Shirt 0.9100, T-shirt/top 0.0500, ..."
std::string prediction_line(const ImagePrediction& prediction);
// [{"image": ..., "top": [{"class": name, "index": k, "probability": p}, ...]}, ...]
std::string predictions_json(const std::vector<ImagePrediction>& predictions);

// A decoded RGB image as a sample of `channels` x `height` x `width` bytes, planar (C,H,W):
// 1 channel is ITU-R 601 luma as PIL's convert("L") computes it (a grey image keeps its
// values); a square sample of another size is the image's shorter side resized to it and the
// centre cropped (the evaluation transform of image folders), any other the image resized to
// it (PIL's bilinear). Throws Error for channels other than 1 or 3.
std::vector<std::uint8_t> image_as_sample(const data::Image& rgb, std::int64_t channels, int height, int width);

}  // namespace plugtrain
