// classes.json in a run's folder: what a trained model's outputs mean and what it reads — the
// class names (a vocabulary's tokens), the sample shape (C,H,W, or T token ids) and whether samples
// are byte images — written when the
// run's data is loaded, so `plugtrain predict` can use the model without reading the data set.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "data/dataset.h"

namespace plugtrain {

struct RunClasses {
  std::int64_t num_classes = 0;
  std::vector<std::string> names;          // one per class ("0", "1", ... when the data set names none)
  std::vector<std::int64_t> sample_shape;  // C,H,W
  bool byte_images = true;                 // false: float samples already normalised (synthetic)
  // A language model's run: samples are windows of token ids (sample_shape {T}) and the names
  // are its vocabulary: each token's text, "<0xNN>" for a byte (sentencepiece's convention).
  bool token_ids = false;
  // The run's copy of the tokenizer its ids came from (the data set's, SDK 4.2); empty: none.
  std::filesystem::path tokenizer_file;
};

std::filesystem::path classes_file(const std::filesystem::path& run_folder);

// Written atomically from the run's training set, with a copy of its tokenizer file when it has
// one; Error (exit 2) when the run folder already keeps another tokenizer (a resume with another).
void write_classes_file(const std::filesystem::path& run_folder, const data::Dataset& train);

// Nullopt when the run folder has none (a run of an older plugtrain); Error when it cannot be read.
std::optional<RunClasses> read_classes_file(const std::filesystem::path& run_folder);

}  // namespace plugtrain
