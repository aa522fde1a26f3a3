#include "readers.h"

#include <filesystem>
#include <stdexcept>
#include <string>

#include "readers/cifar.h"
#include "readers/idx_dataset.h"
#include "readers/image_folder.h"
#include "readers/synthetic.h"
#include "data/target_kinds.h"
#include "util/format.h"

namespace bundled_datasets {

namespace {

namespace fs = std::filesystem;
namespace data = plugtrain::data;
using plugtrain::DatasetRead;
using plugtrain::DatasetReadSplit;
using plugtrain::DatasetTargets;

const char* const kFashionMnistPackage = "/usr/share/datasets/fashion-mnist";

DatasetReadSplit split_of(const data::Dataset& d) {
  DatasetReadSplit s;
  s.inputs = d.images;
  s.decode = d.decode;
  s.sample_shape = d.sample_shape;
  s.targets = d.labels;
  return s;
}

DatasetRead read_of(const data::DatasetPair& pair, std::string source) {
  DatasetRead r;
  r.train = split_of(pair.train);
  r.test = split_of(pair.test);
  r.targets = static_cast<DatasetTargets>(int(pair.train.target_kind));  // the SDK keeps DatasetTargets's order
  r.num_classes = pair.train.num_classes;
  r.class_names = pair.train.class_names;
  r.source = std::move(source);
  return r;
}

std::string mib(int64_t bytes) { return plugtrain::fixed(double(bytes) / (1024.0 * 1024.0), 1) + " MiB"; }

}  // namespace

DatasetRead read_idx(const plugtrain::DatasetQuery& query, const plugtrain::Options&, const char* name) {
  const std::string path = query.path();
  return read_of(data::load_idx_dataset(path, /*num_classes=*/10), std::string(name) + " from " + path);
}

DatasetRead read_cifar(const plugtrain::DatasetQuery& query, const plugtrain::Options& options, bool hundred) {
  const std::string path = query.path();
  if (!hundred) return read_of(data::load_cifar(path, data::CifarKind::cifar10), "cifar10 from " + path);
  const std::string& label = options.string("label");
  const auto labels = label == "coarse" ? plugtrain::CifarLabels::coarse : plugtrain::CifarLabels::fine;
  return read_of(data::load_cifar(path, data::CifarKind::cifar100, labels), "cifar100 (" + label + " labels) from " + path);
}

DatasetRead read_images(const plugtrain::DatasetQuery& query, bool tiny_imagenet) {
  const std::string path = query.path();
  const data::ImageList list = tiny_imagenet ? data::scan_tiny_imagenet(path) : data::scan_image_folder(path);
  data::DecodeSettings decode;
  decode.image_size = query.image_size() > 0 ? query.image_size() : 64;
  decode.threads = query.decode_threads();
  decode.skip_bad = query.skip_bad();
  const int64_t bytes = data::decoded_bytes(int64_t(list.train.size() + list.test.size()), decode.image_size);
  const int64_t available = data::available_memory_bytes();
  decode.in_memory = query.cache() == 1 || (query.cache() < 0 && (available == 0 || bytes <= available / 2));

  data::DecodeReport train_report, test_report;
  data::DatasetPair pair;
  pair.train = data::image_dataset(list.train, list.class_names, decode, &train_report);
  pair.test = data::image_dataset(list.test, list.class_names, decode, &test_report);
  DatasetRead read = read_of(pair, std::string(tiny_imagenet ? "tiny-imagenet" : "image-folder") + " from " + path);
  read.test_split = list.test_split;
  if (tiny_imagenet) {
    // Its val split (the spec's validation split) validates; its test images have no labels (the
    // reader does not list them).
    read.validation = read.test;
    read.test = DatasetReadSplit{};
    read.test_split = "test";
  }
  if (decode.in_memory) {
    const int64_t decoded = train_report.decoded + test_report.decoded;
    const double seconds = train_report.seconds + test_report.seconds;
    read.notes.push_back("decoded " + std::to_string(decoded) + " images to " + std::to_string(decode.image_size) + "x" +
                         std::to_string(decode.image_size) + " in " + plugtrain::fixed(seconds, 1) + " s (" +
                         plugtrain::fixed(seconds > 0 ? double(decoded) / seconds : 0.0, 0) + " images/s on " +
                         std::to_string(train_report.threads) + " threads); cache " + mib(bytes) + " in memory");
  } else {
    read.notes.push_back(query.cache() == 0 ? "cache none: the loader decodes every epoch"
                                            : "cache none (" + mib(bytes) + " decoded would not fit in half of " +
                                                  mib(available) + " available): the loader decodes every epoch");
  }
  for (const auto* r : {&train_report, &test_report})
    if (r->skipped > 0)
      read.notes.push_back("skipped " + std::to_string(r->skipped) + " images that cannot be decoded (data.skip_bad); "
                           "the first: " + r->first_skipped);
  return read;
}

DatasetRead read_synthetic(const plugtrain::DatasetQuery& query, const plugtrain::Options& options) {
  const DatasetTargets kind = data::target_kind_of(query.task_targets()).value_or(DatasetTargets::class_index);
  return read_of(data::make_synthetic(options.integers("shape"), options.integer("classes"), options.integer("train_size"),
                                      options.integer("test_size"), query.seed(), kind),
                 "synthetic");
}

void check_folder(const plugtrain::DatasetQuery& query, const char* name, bool archive_ok) {
  const std::string path = query.path();
  std::error_code ec;
  if (fs::is_directory(path, ec) || (archive_ok && fs::is_regular_file(path, ec))) return;
  std::string hint;
  if (path == kFashionMnistPackage)
    hint = std::string(name) == "fashion-mnist" ? " (install the Debian package dataset-fashion-mnist)"
                                                : std::string(" (set data.path to the ") + name + " files)";
  throw std::runtime_error("data.path '" + path + "' does not exist or is not a " +
                           (archive_ok ? "folder or archive" : "folder") + hint);
}

}  // namespace bundled_datasets
