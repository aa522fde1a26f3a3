// Batch augmentation done with whole-batch tensor ops: random crop with zero padding (each
// sample its own offset) and random horizontal flips.
#pragma once

#include <cstdint>

#include <ATen/core/Generator.h>
#include <ATen/core/Tensor.h>

namespace plugtrain::data {

struct Augmentation {
  bool random_crop = false;
  int64_t crop_padding = 4;
  bool horizontal_flip = false;

  bool any() const { return random_crop || horizontal_flip; }
};

// batch is N,C,H,W. Returns a new tensor of the same shape (or batch itself when aug does
// nothing). Random numbers come from gen only (a CPU generator), in a fixed order: crop
// offsets (N rows, then N columns), then one flip coin per sample (probability 1/2).
at::Tensor augment_batch(const at::Tensor& batch, const Augmentation& aug, at::Generator& gen);

}  // namespace plugtrain::data
