// plugtrain's image pipeline against torchvision's ImageFolder + DataLoader, in one
// invocation, on one generated image folder: 100 classes x 40 JPEGs of 64x64 (quality 90,
// 4:2:0; tests/support/image_data.h's class colour plus noise), written once into a temporary
// folder. For workers = 1 and 2:
//   (a) decode into the cache: data::image_dataset with DecodeSettings{64, in memory, threads =
//       workers}, images/s (the report's own time);
//   (b) the first, decoding epoch with data.cache = "none": the BatchLoader (workers = N,
//       prefetch 2N) decodes each image on demand, applies random_crop (padding 4) +
//       horizontal_flip, normalises, batches of 128; images/s from making the loader to its
//       last batch;
//   (c) a cached epoch through the same BatchLoader and augmentation, samples/s;
//   (d) the Python peer (bench/python/imagefolder_peer.py): torchvision.datasets.ImageFolder
//       with the PIL loader, RandomCrop(64, padding=4), RandomHorizontalFlip, ToTensor,
//       Normalize, DataLoader(num_workers = N, batch_size 128, shuffle), one epoch, images/s
//       (worker start-up included, as in each epoch without persistent workers).
// (b) / (d) is the like-for-like ratio (both decode, augment, normalise and batch every
// image of the epoch); the goal is >= 3. (a) + (c) is a first epoch with data.cache = "memory"
// (decode everything, then a cached epoch). The peer runs beside the bench and is asked for one
// epoch at a time, so the four measurements alternate (a, b, c, d, a, b, c, d, ...) and machine
// noise hits each alike; each figure is the median of 3 rounds. Without Python or torchvision
// the peer's column says why it was skipped.
#include <benchmark/benchmark.h>

#include <unistd.h>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "bench_stats.h"
#include "data/batch_loader.h"
#include "readers/image_folder.h"
#include "python_peer.h"
#include "support/image_data.h"

namespace {

using plugtrain::bench::median;

using namespace plugtrain;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr int kClasses = 100, kPerClass = 40, kSide = 64;
constexpr std::int64_t kBatch = 128;
constexpr int kRounds = 3;
const std::vector<double> kMean{0.485, 0.456, 0.406}, kStd{0.229, 0.224, 0.225};

struct Fixture {
  fs::path root = fs::temp_directory_path() / ("plugtrain-image-bench-" + std::to_string(::getpid()));
  data::ImageList list;
  std::int64_t jpeg_bytes = 0;
  data::Dataset cached;  // decoded once, for the cached epochs
  Fixture() {
    for (int k = 0; k < kClasses; ++k) {
      const std::string name = "class_" + std::to_string(k);
      for (int i = 0; i <= kPerClass; ++i) {  // the last one of each class goes to val/
        const auto bytes = testing::encode_jpeg(testing::class_image(k, i, kSide, kSide), 90);
        jpeg_bytes += i < kPerClass ? std::int64_t(bytes.size()) : 0;
        testing::write_bytes(root / (i < kPerClass ? "train" : "val") / name / ("img" + std::to_string(i) + ".jpg"),
                             bytes);
      }
    }
    list = data::scan_image_folder(root);
    cached = dataset(true, 0);
  }
  ~Fixture() {
    std::error_code ec;
    fs::remove_all(root, ec);
  }
  data::Dataset dataset(bool in_memory, int threads, data::DecodeReport* report = nullptr) const {
    data::DecodeSettings s;
    s.image_size = kSide;
    s.in_memory = in_memory;
    s.threads = threads;
    data::Dataset d = data::image_dataset(list.train, list.class_names, s, report);
    d.normalization = {kMean, kStd};
    return d;
  }
};

Fixture& fixture() {
  static Fixture f;
  return f;
}

std::map<std::string, std::vector<double>> g_per_second;  // "decode/1" -> runs

// One epoch through a BatchLoader with `workers` threads; samples per second from making the
// loader to its last batch.
double loader_epoch(const data::Dataset& d, int workers) {
  data::AugmentOptions augment;
  augment.order = {Augmentation::random_crop, Augmentation::horizontal_flip};
  augment.crop_padding = 4;
  LoaderConfig config;
  config.workers = workers;
  config.prefetch_depth = 2 * workers;
  config.pin_memory = false;
  config.non_blocking = false;
  const auto start = Clock::now();
  data::BatchLoader loader(d, kBatch, /*shuffle=*/true, augment, config, c10::Device(c10::kCPU), /*seed=*/1);
  loader.start_epoch(0);
  std::int64_t seen = 0;
  while (auto batch = loader.next()) seen += batch->inputs.size(0);
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  if (seen != d.size()) throw std::runtime_error("the loader gave " + std::to_string(seen) + " samples");
  return double(seen) / seconds;
}

void record(benchmark::State& state, const std::string& key, double per_second, std::int64_t items) {
  g_per_second[key].push_back(per_second);
  state.SetIterationTime(per_second > 0 ? double(items) / per_second : 0);
  state.counters["per_s"] = per_second;
}

void Decode(benchmark::State& state, int workers) {
  for (auto _ : state) {
    data::DecodeReport report;
    const data::Dataset d = fixture().dataset(true, workers, &report);
    record(state, "decode/" + std::to_string(workers), double(report.decoded) / report.seconds, report.decoded);
  }
}

void LoaderDecode(benchmark::State& state, int workers) {
  for (auto _ : state) {
    const data::Dataset d = fixture().dataset(false, workers);
    record(state, "loader_decode/" + std::to_string(workers), loader_epoch(d, workers), d.size());
  }
}

void LoaderCached(benchmark::State& state, int workers) {
  for (auto _ : state) {
    const data::Dataset& d = fixture().cached;
    record(state, "loader_cached/" + std::to_string(workers), loader_epoch(d, workers), d.size());
  }
}

std::string joined(const std::vector<double>& v) {
  std::string s;
  for (double x : v) s += (s.empty() ? "" : ",") + std::to_string(x);
  return s;
}

std::unique_ptr<plugtrain::bench::PythonPeer> g_python;
std::map<int, std::vector<double>> g_first_batch;  // workers -> torchvision's time to its first batch

plugtrain::bench::PythonPeer& python() {
  if (!g_python) {
    Fixture& f = fixture();
    g_python = std::make_unique<plugtrain::bench::PythonPeer>(
        "imagefolder_peer.py",
        std::vector<std::string>{"--root", f.root.string(), "--threads", std::to_string(at::get_num_threads()),
                                 "--batch", std::to_string(kBatch), "--size", std::to_string(kSide), "--mean",
                                 joined(kMean), "--std", joined(kStd)});
  }
  return *g_python;
}

void Torchvision(benchmark::State& state, int workers) {
  for (auto _ : state) {
    const nlohmann::json answer = python().ask("epoch " + std::to_string(workers));
    if (answer.is_null()) {
      state.SetIterationTime(0);
      state.SetLabel("python peer: skipped (" + python().skipped() + ")");
      continue;
    }
    const double images = python().hello().at("images").get<double>();
    record(state, "torchvision/" + std::to_string(workers), images / answer.at("seconds").get<double>(),
           std::int64_t(images));
    g_first_batch[workers].push_back(answer.at("first_batch_seconds").get<double>());
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<int> worker_counts{1, 2};
  auto add = [](const std::string& name, auto fn) {
    benchmark::RegisterBenchmark(name.c_str(), fn)->Iterations(1)->UseManualTime()->Unit(benchmark::kMillisecond);
  };
  for (int w : worker_counts) {
    const std::string suffix = "/workers:" + std::to_string(w);
    for (int r = 0; r < kRounds; ++r) {  // the four alternate, so machine noise hits each alike
      add("ImagePipeline/decode_to_cache" + suffix, [w](benchmark::State& s) { Decode(s, w); });
      add("ImagePipeline/loader_decode_augment" + suffix, [w](benchmark::State& s) { LoaderDecode(s, w); });
      add("ImagePipeline/loader_cached_augment" + suffix, [w](benchmark::State& s) { LoaderCached(s, w); });
      add("ImagePipeline/torchvision_imagefolder" + suffix, [w](benchmark::State& s) { Torchvision(s, w); });
    }
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();

  if (!g_per_second.empty() || g_python) {
    const Fixture& f = fixture();
    std::printf("\n%lld JPEGs of %dx%d (%d classes x %d, quality 90, 4:2:0, %.1f KiB on average), batch %lld,\n"
                "random_crop(padding 4) + horizontal_flip + normalise; %d intra-op threads; median of %d rounds\n"
                "(each torchvision epoch includes its worker start-up)\n\n",
                (long long)f.list.train.size(), kSide, kSide, kClasses, kPerClass,
                double(f.jpeg_bytes) / double(f.list.train.size()) / 1024.0, (long long)kBatch, at::get_num_threads(),
                kRounds);
  }
  // Columns: (a) decode into the cache, (b) the loader decoding on demand (data.cache = "none":
  // the like-for-like first epoch), (c) a cached epoch, (a)+(c) a first epoch with data.cache =
  // "memory", (d) torchvision; then (b)/(d) and (a)/(d).
  std::printf("  %-7s %12s %14s %13s %13s %13s %9s %9s\n", "workers", "(a) decode", "(b) loader", "(c) cached",
              "(a)+(c)", "(d)", "(b)/(d)", "(a)/(d)");
  std::printf("  %-7s %12s %14s %13s %13s %13s %9s %9s\n", "", "to cache", "decode+augm.", "epoch", "cache=memory",
              "torchvision", "like for", "");
  std::printf("  %-7s %12s %14s %13s %13s %13s %9s %9s\n", "", "img/s", "img/s", "samples/s", "1st epoch/s",
              "img/s", "like", "");
  auto figure = [](const std::string& key) {
    const auto it = g_per_second.find(key);
    return it == g_per_second.end() ? 0.0 : median(it->second);
  };
  auto cell = [](double v, int width, const char* none = "-") {
    char buf[48];
    if (v > 0)
      std::snprintf(buf, sizeof buf, "%*.0f", width, v);
    else
      std::snprintf(buf, sizeof buf, "%*s", width, none);
    return std::string(buf);
  };
  auto ratio_cell = [](double a, double b) {
    char buf[48];
    if (a > 0 && b > 0)
      std::snprintf(buf, sizeof buf, "%8.2fx", a / b);
    else
      std::snprintf(buf, sizeof buf, "%9s", "-");
    return std::string(buf);
  };
  const bool peer_skipped = g_python && !g_python->ok();
  std::vector<std::string> verdicts;
  for (int w : worker_counts) {
    const std::string n = std::to_string(w);
    const double a = figure("decode/" + n), b = figure("loader_decode/" + n), c = figure("loader_cached/" + n),
                 d = figure("torchvision/" + n);
    const double first_cached = a > 0 && c > 0 ? 1 / (1 / a + 1 / c) : 0;  // images / (images/a + images/c)
    std::printf("  %-7d %12s %14s %13s %13s %13s %9s %9s\n", w, cell(a, 12).c_str(), cell(b, 14).c_str(),
                cell(c, 13).c_str(), cell(first_cached, 13).c_str(), cell(d, 13, peer_skipped ? "skipped" : "-").c_str(),
                ratio_cell(b, d).c_str(), ratio_cell(a, d).c_str());
    if (b > 0 && d > 0) {
      char line[200];
      std::snprintf(line, sizeof line,
                    "workers %d: plugtrain's first, decoding epoch (b) / torchvision (d) = %.2fx (goal >= 3x: %s)", w,
                    b / d, b / d >= 3 ? "met" : "NOT met");
      verdicts.push_back(line);
    }
  }
  std::printf("\n");
  for (const auto& v : verdicts) std::printf("%s\n", v.c_str());
  for (const auto& [w, firsts] : g_first_batch)
    std::printf("torchvision, workers %d: %.0f ms from creating the epoch's iterator to its first batch\n", w,
                1000 * median(firsts));
  if (g_python && g_python->ok()) {
    const nlohmann::json& hello = g_python->hello();
    std::printf("torchvision side: torch %s, torchvision %s, Pillow %s, image backend %s\n",
                hello.at("torch").get<std::string>().c_str(), hello.at("torchvision").get<std::string>().c_str(),
                hello.at("pillow").get<std::string>().c_str(), hello.at("image_backend").get<std::string>().c_str());
  } else if (g_python) {
    std::printf("python peer: skipped (%s)\n", g_python->skipped().c_str());
  }
  g_python.reset();
  return 0;
}
