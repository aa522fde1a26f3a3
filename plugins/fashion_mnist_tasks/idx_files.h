// Fashion-MNIST's four IDX files (plain or .gz) from a folder, as tensors: the images uint8
// (N, 1, 28, 28) and the labels int64 (N), for each split.
#pragma once

#include <string>

#include <torch/types.h>

namespace fashion_mnist_tasks {

struct Split {
  torch::Tensor images;  // uint8 (N, 1, H, W)
  torch::Tensor labels;  // int64 (N)
};

// split: "train" or "t10k". Throws std::runtime_error naming the file.
Split read_split(const std::string& folder, const std::string& split);

// The item names, in label order.
const std::vector<std::string>& class_names();

}  // namespace fashion_mnist_tasks
