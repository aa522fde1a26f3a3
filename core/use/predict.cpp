#include "plugins/model_forward.h"
#include "use/predict.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <ostream>

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>
#include <nlohmann/json.hpp>

#include "config/config_error.h"
#include "data/batch_loader.h"
#include "data/load_dataset.h"
#include "plugins/plugin_error.h"
#include "run/build.h"
#include "run/classes_file.h"
#include "train/precision.h"
#include "util/format.h"
#include "util/text.h"

namespace plugtrain {

namespace fs = std::filesystem;

namespace {

// `side`: the samples' side, which lets a large JPEG decode at a reduced scale exactly as the
// image-folder reader decoded the run's images.
data::Image read_image(const fs::path& file, int side) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw Error(file.string() + ": cannot read the image: " + std::strerror(errno));
  const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return data::decode_image(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size(), file.string(), side);
}

// The statistics the run's loader normalised with, chosen as the loader chose them
// (data::settled_normalization): data.mean/std, none, or the training set's as the run stored them.
data::Normalization run_normalization(const Experiment& e, const fs::path& run_folder, std::int64_t channels) {
  data::DataOptions o;
  o.normalize = e.data.normalize;
  o.mean = e.data.mean;
  o.std = e.data.std;
  const fs::path file = run_folder / "normalization.json";
  o.stored = read_normalization(file);
  o.stored_from = file.string();
  std::string note;
  if (std::optional<data::Normalization> n = data::settled_normalization(o, std::size_t(channels), note)) return *n;
  throw Error(run_folder.string() + ": no normalization.json, the training set's statistics the run normalised "
              "its images with; predict reads no data set to compute them again");
}

// What predict needs of the run before any model work: one class per image, byte images.
RunClasses classes_of(const TrainedFiles& files) {
  if (files.run_folder.empty())
    throw Error(files.weights.string() + ": predict needs the run's folder around the checkpoint (its classes.json "
                "and normalization.json): give runs/<name>/version_N or a checkpoint in its checkpoints/",
                exit_bad_input);
  std::optional<RunClasses> classes = read_classes_file(files.run_folder);
  if (!classes)
    throw Error(files.run_folder.string() + ": no classes.json (the class names and sample shape, which runs "
                "write since plugtrain evaluate and predict exist); `plugtrain evaluate` works on this run");
  if (classes->token_ids)
    throw Error(files.run_folder.string() + ": the run is a language model (token ids): predict reads image files; "
                "`plugtrain generate` writes text", exit_bad_input);
  if (!classes->byte_images)
    throw Error(files.run_folder.string() + ": the run's samples are float data, not images: predict reads image files",
                exit_bad_input);
  if (classes->sample_shape[0] != 1 && classes->sample_shape[0] != 3)
    throw Error(files.run_folder.string() + ": the run's samples have " + std::to_string(classes->sample_shape[0]) +
                " channels; predict makes images 1 (grayscale) or 3 (RGB)", exit_bad_input);
  return *classes;
}

// The Dataset the run's loader reads: the images' bytes, normalised as the run's were.
data::Dataset image_set(const std::vector<data::Image>& decoded, const RunClasses& classes, data::Normalization n) {
  const std::vector<std::int64_t>& shape = classes.sample_shape;
  const std::int64_t count = std::int64_t(decoded.size()), per = shape[0] * shape[1] * shape[2];
  data::Dataset d;
  d.images = at::empty({count, shape[0], shape[1], shape[2]}, at::TensorOptions().dtype(at::kByte));
  for (std::int64_t i = 0; i < count; ++i) {
    const std::vector<std::uint8_t> sample =
        image_as_sample(decoded[std::size_t(i)], shape[0], int(shape[1]), int(shape[2]));
    std::copy(sample.begin(), sample.end(), d.images.data_ptr<std::uint8_t>() + i * per);
  }
  d.labels = at::zeros({count}, at::TensorOptions().dtype(at::kLong));  // unread: the loader carries them
  d.num_classes = classes.num_classes;
  d.sample_shape = shape;
  d.class_names = classes.names;
  d.normalization = std::move(n);
  return d;
}

}  // namespace

std::vector<std::uint8_t> image_as_sample(const data::Image& rgb, std::int64_t channels, int height, int width) {
  if (channels != 1 && channels != 3)
    throw Error("the run's samples have " + std::to_string(channels) + " channels; predict makes 1 (grayscale) or 3 (RGB)",
                exit_bad_input);
  data::Image image = rgb;
  if (channels == 1) {
    image.channels = 1;
    image.pixels.resize(std::size_t(rgb.width) * std::size_t(rgb.height));
    for (std::size_t i = 0; i < image.pixels.size(); ++i) {
      const std::uint8_t* p = &rgb.pixels[i * 3];
      // PIL's L = R * 299/1000 + G * 587/1000 + B * 114/1000 in 16-bit fixed point (the three
      // weights sum to 65536, so a grey pixel keeps its value).
      image.pixels[i] = std::uint8_t((p[0] * 19595u + p[1] * 38470u + p[2] * 7471u + 0x8000u) >> 16);
    }
  }
  if (image.width != width || image.height != height)
    image = height == width ? data::resize_shorter_then_center_crop(image, height) : data::resize_bilinear(image, width, height);
  // Interleaved H,W,C to planar C,H,W.
  const std::size_t plane = std::size_t(width) * std::size_t(height);
  std::vector<std::uint8_t> planar(plane * std::size_t(channels));
  for (std::size_t i = 0; i < plane; ++i)
    for (std::size_t c = 0; c < std::size_t(channels); ++c) planar[c * plane + i] = image.pixels[i * std::size_t(channels) + c];
  return planar;
}

std::vector<ImagePrediction> predict_images(const PredictRequest& request, std::ostream& log) {
  TrainedFiles files = find_trained_files(request.source.given, request.source.experiment);
  const RunClasses classes = classes_of(files);
  std::vector<data::Image> decoded;
  const int side = int(std::min(classes.sample_shape.at(1), classes.sample_shape.at(2)));
  for (const fs::path& image : request.images) decoded.push_back(read_image(image, side));  // every file, before any model work

  TrainedRun t = plan_trained_run(request.source, std::move(files));
  const ValidatedRun& run = t.run;
  const Experiment& e = run.experiment;
  if (run.task->target_kind != DatasetTargets::class_index)
    throw ConfigError("predict: task '" + run.task->name + "' does not learn one class per image; `plugtrain evaluate` "
                      "measures any task");
  if (run.dataset && run.dataset->has_fields())
    throw ConfigError("predict: data set '" + run.dataset->spec.name + "' gives its samples fields beside the image, "
                      "which image files do not have");
  for (const std::string& line : t.plan.choice.reasons) log << "backend: " << line << "\n";
  const data::Dataset images = image_set(decoded, classes, run_normalization(e, t.files.run_folder, classes.sample_shape[0]));

  // The run's task and model for its classes, as build_run makes them, without its data.
  const TrainedModel trained = build_trained_model(t, images, log);
  const std::shared_ptr<Task>& task = trained.task;
  const std::shared_ptr<Model>& model = trained.model;
  const at::MemoryFormat format = trained.memory_format;

  at::NoGradGuard no_grad;
  model->eval();
  const Precision precision(e.train.precision, t.plan.device);
  const std::int64_t batch = std::max<std::int64_t>(1, std::min<std::int64_t>(images.size(), e.data.test_batch_size));
  data::BatchLoader batches(images, batch, /*shuffle=*/false, data::AugmentOptions{}, t.plan.loader, t.plan.device, 0, {},
                            format);
  const std::int64_t k = std::min<std::int64_t>(request.top_k, task->model_outputs());
  std::vector<ImagePrediction> predictions;
  while (auto b = batches.next()) {
    at::Tensor outputs;
    {
      const AutocastScope autocast = precision.autocast();
      outputs = forward_input(*model, b->inputs);
    }
    const auto [probability, index] = at::softmax(outputs.to(at::kFloat), 1).topk(k, 1);
    const at::Tensor p = probability.to(at::kCPU, at::kDouble).contiguous(), c = index.to(at::kCPU).contiguous();
    for (std::int64_t row = 0; row < p.size(0); ++row) {
      ImagePrediction prediction;
      prediction.image = request.images[predictions.size()];
      for (std::int64_t j = 0; j < k; ++j) {
        const std::int64_t cls = c[row][j].item<std::int64_t>();
        const std::string name = cls < std::int64_t(classes.names.size()) ? classes.names[std::size_t(cls)] : std::to_string(cls);
        prediction.top.push_back({cls, name, p[row][j].item<double>()});
      }
      predictions.push_back(std::move(prediction));
    }
  }
  return predictions;
}

std::string prediction_line(const ImagePrediction& prediction) {
  std::vector<std::string> classes;
  for (const ClassProbability& c : prediction.top) classes.push_back(c.name + " " + fixed(c.probability, 4));
  return prediction.image.string() + ": " + join(classes, ", ");
}

std::string predictions_json(const std::vector<ImagePrediction>& predictions) {
  nlohmann::json out = nlohmann::json::array();
  for (const ImagePrediction& prediction : predictions) {
    nlohmann::json top = nlohmann::json::array();
    for (const ClassProbability& c : prediction.top)
      top.push_back({{"class", c.name}, {"index", c.index}, {"probability", c.probability}});
    out.push_back({{"image", prediction.image.string()}, {"top", top}});
  }
  return out.dump(2);
}

}  // namespace plugtrain
