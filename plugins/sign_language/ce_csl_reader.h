// CE-CSL (Chinese continuous sign language, the TFNet paper's data set) in its release layout,
// with the videos' frames extracted into a folder per video:
//   <root>/label/train.csv, dev.csv, test.csv   Number,Translator,Chinese Sentences,Gloss,Note
//   <root>/video/<split>/<Translator>/<Number>/ the video's frames (.jpg, .jpeg or .png), in
//                                               file-name order (ffmpeg -i <Number>.mp4 <Number>/%06d.jpg)
// The Gloss column holds the sentence's glosses separated by gloss_separator ("/"). A clip holds
// at most `frames` frames: a longer video is sampled evenly down to them, a shorter one keeps
// its own and is padded with its last frame, and its field input_lengths says how many
// are real. Each frame is resized to height x width (Pillow's bilinear), and the frames are
// stacked top to bottom: a sample is uint8 (3, frames x height, width). Targets are the glosses'
// indices in order, padded with -1; the vocabulary is every gloss of the splits read, in UTF-8 order.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include "plugtrain/dataset.h"

namespace sign_language {

struct CeCslOptions {
  std::string test_split = "test";  // the split the test side reads: "test", or "dev"
  std::int64_t frames = 32, height = 64, width = 64;
  std::string gloss_separator = "/";
  std::int64_t max_videos = 0;  // per split, the first N rows; 0: all
};

// Throws std::runtime_error with one line naming the file or folder and the cause. Each split
// has its field input_lengths.
plugtrain::DatasetRead read_ce_csl(const std::filesystem::path& root, const CeCslOptions& options);

}  // namespace sign_language
