#include "ce_csl_reader.h"

#include <algorithm>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <stdexcept>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include "csv_rows.h"
#include "data/image_codec.h"

namespace sign_language {

namespace fs = std::filesystem;

namespace {

struct Video {
  fs::path folder;
  std::vector<std::string> glosses;
};

std::string trimmed(const std::string& s) {
  const auto begin = s.find_first_not_of(" \t");
  if (begin == std::string::npos) return "";
  return s.substr(begin, s.find_last_not_of(" \t") - begin + 1);
}

std::vector<std::string> split_glosses(const std::string& text, const std::string& separator) {
  std::vector<std::string> glosses;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = separator.empty() ? std::string::npos : text.find(separator, start);
    const std::string gloss = trimmed(text.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (!gloss.empty()) glosses.push_back(gloss);
    if (end == std::string::npos) break;
    start = end + separator.size();
  }
  return glosses;
}

std::size_t column(const CsvRow& header, const std::string& name, const fs::path& file) {
  for (std::size_t i = 0; i < header.fields.size(); ++i)
    if (trimmed(header.fields[i]) == name) return i;
  throw std::runtime_error(file.string() + ": no '" + name + "' column in its header (CE-CSL's is Number,Translator,"
                           "Chinese Sentences,Gloss,Note)");
}

// The rows of label/<split>.csv and where each one's frames are.
std::vector<Video> read_split(const fs::path& root, const std::string& split, const CeCslOptions& o) {
  const fs::path file = root / "label" / (split + ".csv");
  if (!fs::is_regular_file(file))
    throw std::runtime_error(file.string() + ": no such label file (data.path must be the CE-CSL folder, holding "
                             "label/ and video/)");
  const std::vector<CsvRow> rows = read_csv(file);
  if (rows.size() < 2) throw std::runtime_error(file.string() + ": no rows under the header");
  const std::size_t number = column(rows[0], "Number", file), translator = column(rows[0], "Translator", file),
                    gloss = column(rows[0], "Gloss", file);
  std::vector<Video> videos;
  for (std::size_t r = 1; r < rows.size(); ++r) {
    if (o.max_videos > 0 && std::int64_t(videos.size()) == o.max_videos) break;
    const CsvRow& row = rows[r];
    const std::string where = file.string() + ":" + std::to_string(row.line);
    if (row.fields.size() <= std::max({number, translator, gloss}))
      throw std::runtime_error(where + ": " + std::to_string(row.fields.size()) + " fields, fewer than the header's");
    Video v;
    for (const std::size_t c : {translator, number}) {
      const std::string part = trimmed(row.fields[c]);
      if (part.empty() || part == "." || part == ".." || part.find('/') != std::string::npos)
        throw std::runtime_error(where + ": '" + part + "' in column '" + trimmed(rows[0].fields[c]) +
                                 "' is not a folder name (a video's frames are in video/<split>/<Translator>/<Number>/)");
    }
    v.folder = root / "video" / split / trimmed(row.fields[translator]) / trimmed(row.fields[number]);
    v.glosses = split_glosses(row.fields[gloss], o.gloss_separator);
    if (v.glosses.empty()) throw std::runtime_error(where + ": no glosses in its Gloss field");
    videos.push_back(std::move(v));
  }
  return videos;
}

bool is_frame_file(const fs::path& p) {
  std::string ext = p.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  return ext == ".jpg" || ext == ".jpeg" || ext == ".png";
}

std::vector<fs::path> frame_files(const fs::path& folder) {
  if (!fs::is_directory(folder))
    throw std::runtime_error(folder.string() + ": no frame folder for this video (extract its frames there: ffmpeg -i "
                             "<Number>.mp4 <Number>/%06d.jpg)");
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(folder))
    if (entry.is_regular_file() && is_frame_file(entry.path())) files.push_back(entry.path());
  if (files.empty()) throw std::runtime_error(folder.string() + ": no .jpg, .jpeg or .png frames in it");
  std::sort(files.begin(), files.end());
  return files;
}

// Which of a video's n frames fills slot i of a clip of `frames`: evenly over a longer video
// (the middle of each share), each in turn for a shorter one, whose last frame then pads it.
std::size_t frame_for_slot(std::int64_t i, std::int64_t frames, std::size_t n) {
  if (std::int64_t(n) <= frames) return std::min(n - 1, std::size_t(i));
  return std::min(n - 1, std::size_t((double(i) + 0.5) * double(n) / double(frames)));
}

// Fills `out` with the clip; returns how many of its frames are real.
std::int64_t read_clip(const Video& v, const CeCslOptions& o, std::uint8_t* out) {
  const std::vector<fs::path> files = frame_files(v.folder);
  const std::int64_t plane = o.frames * o.height * o.width;  // one channel of the stacked clip
  for (std::int64_t i = 0; i < o.frames; ++i) {
    const fs::path& file = files[frame_for_slot(i, o.frames, files.size())];
    std::ifstream in(file, std::ios::binary);
    if (!in) throw std::runtime_error(file.string() + ": cannot be read");
    const std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    plugtrain::data::Image image = plugtrain::data::decode_image(bytes.data(), bytes.size(), file.string());
    if (image.width != o.width || image.height != o.height)
      image = plugtrain::data::resize_bilinear(image, int(o.width), int(o.height));
    for (std::int64_t y = 0; y < o.height; ++y)
      for (std::int64_t x = 0; x < o.width; ++x)
        for (std::int64_t c = 0; c < 3; ++c)
          out[c * plane + (i * o.height + y) * o.width + x] = image.pixels[(y * o.width + x) * 3 + c];
  }
  return std::min(std::int64_t(files.size()), o.frames);
}

// The split's clips and targets, with each clip's real frames in its field input_lengths.
plugtrain::DatasetReadSplit read_clips(const std::vector<Video>& videos, const std::map<std::string, std::int64_t>& index,
                                       std::int64_t longest, const CeCslOptions& o) {
  const auto n = std::int64_t(videos.size());
  at::Tensor inputs = at::empty({n, 3, o.frames * o.height, o.width}, at::kByte);
  at::Tensor targets = at::full({n, longest}, -1, at::kLong);
  auto* t = targets.data_ptr<std::int64_t>();
  for (std::int64_t v = 0; v < n; ++v)
    for (std::size_t g = 0; g < videos[v].glosses.size(); ++g) t[v * longest + std::int64_t(g)] = index.at(videos[v].glosses[g]);
  // Videos in parallel (the decoder is thread-safe); the first failure is rethrown.
  std::uint8_t* pixels = inputs.data_ptr<std::uint8_t>();
  const std::int64_t clip = 3 * o.frames * o.height * o.width;
  at::Tensor lengths = at::empty({n}, at::kLong);
  std::int64_t* real = lengths.data_ptr<std::int64_t>();
  at::parallel_for(0, n, 1, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t v = begin; v < end; ++v) real[v] = read_clip(videos[v], o, pixels + v * clip);
  });
  plugtrain::DatasetReadSplit split;
  split.inputs = inputs;
  split.targets = targets;
  split.fields["input_lengths"] = lengths;
  return split;
}

}  // namespace

plugtrain::DatasetRead read_ce_csl(const fs::path& root, const CeCslOptions& o) {
  const std::vector<Video> train = read_split(root, "train", o), test = read_split(root, o.test_split, o);
  std::set<std::string> vocabulary;
  std::size_t longest = 0;
  for (const auto* videos : {&train, &test})
    for (const Video& v : *videos) {
      vocabulary.insert(v.glosses.begin(), v.glosses.end());
      longest = std::max(longest, v.glosses.size());
    }
  std::map<std::string, std::int64_t> index;
  plugtrain::DatasetRead d;
  d.targets = plugtrain::DatasetTargets::sequence;
  for (const std::string& gloss : vocabulary) {
    index.emplace(gloss, std::int64_t(d.class_names.size()));
    d.class_names.push_back(gloss);
  }
  d.num_classes = std::int64_t(vocabulary.size());
  d.train = read_clips(train, index, std::int64_t(longest), o);
  d.test = read_clips(test, index, std::int64_t(longest), o);
  d.source = "CE-CSL from " + root.string() + " (train " + std::to_string(train.size()) + " videos, " + o.test_split + " " +
             std::to_string(test.size()) + "; " + std::to_string(d.num_classes) + " glosses; " + std::to_string(o.frames) +
             " frames of " + std::to_string(o.height) + "x" + std::to_string(o.width) + " per clip)";
  return d;
}

}  // namespace sign_language
