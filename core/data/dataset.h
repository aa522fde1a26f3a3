// In-memory data sets: MNIST-style IDX folders, seeded synthetic data, label noise, subsets.
#pragma once

#include <cstdint>
#include <filesystem>
#include <vector>

#include <ATen/core/Tensor.h>

namespace plugtrain::data {

struct Dataset {
  at::Tensor images;                  // float32 N,C,H,W (CPU, contiguous)
  at::Tensor labels;                  // int64 N
  int64_t num_classes = 0;
  std::vector<int64_t> sample_shape;  // C,H,W

  int64_t size() const { return labels.defined() ? labels.size(0) : 0; }
};

struct DatasetPair {
  Dataset train, test;
  double mean = 0.0, std = 1.0;  // training-set statistics both sets were normalised with
};

// Reads train-images-idx3-ubyte, train-labels-idx1-ubyte, t10k-images-idx3-ubyte and
// t10k-labels-idx1-ubyte (each plain or with .gz) from folder. Pixels are scaled to [0,1],
// then both sets are normalised with the training set's mean and std; images get a
// channel dim (N,1,H,W); num_classes = largest label + 1. Throws DataError.
// num_classes > 0: the data set's own number of classes (10 for MNIST and Fashion-MNIST); a
// label outside it is a DataError naming the file, the sample and the label, rather than
// silently another number of classes. 0: the largest label + 1.
DatasetPair load_idx_dataset(const std::filesystem::path& folder, int64_t num_classes = 0);

// A learnable data set, identical for the same arguments: one fixed random prototype per
// class plus gaussian noise, normalised like load_idx_dataset. sample_shape is C,H,W.
DatasetPair make_synthetic(std::vector<int64_t> sample_shape, int64_t num_classes, int64_t train_size,
                           int64_t test_size, uint64_t seed);

// Gives exactly round(p*N) samples of d, chosen by a permutation seeded with seed, a
// different random class. Returns how many labels changed. d.labels is replaced by a new
// tensor (tensors shared with other Datasets are left alone).
int64_t apply_label_noise(Dataset& d, double p, uint64_t seed);

// The first n samples (sharing memory with d); n <= 0 or n >= N means all of d.
Dataset subset(const Dataset& d, int64_t n);

}  // namespace plugtrain::data
