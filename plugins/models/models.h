// Internal to the models plugin: each architecture's spec, plus the checks they share.
// Factories report a bad option or input with one std::invalid_argument line, prefixed
// with the model's name. Each spec says which targets its outputs fit (ModelSpec::serves).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include <torch/types.h>

#include "plugtrain/model.h"

namespace plugtrain::models {

ModelSpec mlp_spec();
ModelSpec convnet_spec();
ModelSpec lenet5_spec();
// What each option accepts, checked by the host before any data is loaded.
std::vector<OptionRule> mlp_rules();
std::vector<OptionRule> convnet_rules();
std::vector<OptionRule> lenet5_rules();

// The model zoo: torchvision's parameter names and shapes (blocks.h and each file's header).
ModelSpec resnet_spec(int depth);  // resnet18, resnet34, resnet50, resnet101
ModelSpec wide_resnet50_2_spec();
std::vector<OptionRule> resnet_rules();  // every resnet and wide_resnet50_2
ModelSpec wide_resnet_spec();            // the CIFAR WRN-d-k
std::vector<OptionRule> wide_resnet_rules();
ModelSpec vgg_bn_spec(int depth);  // vgg11_bn, vgg13_bn, vgg16_bn, vgg19_bn
std::vector<OptionRule> vgg_rules();
ModelSpec mobilenet_v2_spec();
std::vector<OptionRule> mobilenet_v2_rules();
ModelSpec baseline_cnn_spec();
std::vector<OptionRule> baseline_cnn_rules();
ModelSpec unet_spec();  // segmentation: (N, classes, H, W) out
std::vector<OptionRule> unet_rules();
ModelSpec crnn_spec();  // sequences: (N, T, classes) out, for CTC
std::vector<OptionRule> crnn_rules();
// Transformers (transformer.h): nanoGPT's GPT for language models, and a ViT for images.
ModelSpec gpt_spec();  // (N, T) token ids in, (N, T, vocabulary) out
std::vector<OptionRule> gpt_rules();
ModelSpec vit_spec();
std::vector<OptionRule> vit_rules();

// What (N, K) scores fit: a class, a set of K labels or K values per sample.
inline std::vector<DatasetTargets> per_sample_targets() {
  return {DatasetTargets::class_index, DatasetTargets::multi_hot, DatasetTargets::real};
}

[[noreturn]] inline void fail(const std::string& model, const std::string& what) {
  throw std::invalid_argument(model + ": " + what);
}

// (C, H, W) with every extent > 0, and at least one class.
inline void check_inputs(const std::string& model, const ModelInputs& inputs) {
  const auto& s = inputs.input_shape;
  if (s.size() != 3 || s[0] <= 0 || s[1] <= 0 || s[2] <= 0) {
    std::string got;
    for (std::size_t i = 0; i < s.size(); ++i) got += (i ? ", " : "") + std::to_string(s[i]);
    fail(model, "input shape must be (C, H, W) with positive sizes (got (" + got + "))");
  }
  if (inputs.num_classes <= 0)
    fail(model, "num_classes must be > 0 (got " + std::to_string(inputs.num_classes) + ")");
}

inline void check_dropout(const std::string& model, double p) {
  if (!(p >= 0.0 && p < 1.0)) fail(model, "dropout must be in [0, 1) (got " + std::to_string(p) + ")");
}

enum class Activation { relu, gelu, tanh };

// `allowed` lists the names this model accepts, e.g. {"relu", "tanh"}.
inline Activation parse_activation(const std::string& model, const std::string& name,
                                   const std::vector<std::string>& allowed) {
  bool ok = false;
  std::string list;
  for (const auto& a : allowed) {
    ok = ok || a == name;
    list += (list.empty() ? "" : ", ") + a;
  }
  if (!ok) fail(model, "activation must be one of " + list + " (got '" + name + "')");
  if (name == "gelu") return Activation::gelu;
  if (name == "tanh") return Activation::tanh;
  return Activation::relu;
}

// The activation of `x`, a layer's fresh output that nothing else reads: relu and tanh run in
// place, as torchvision's ReLU(inplace=True) (autograd needs their result, not their input; the
// layer before needs its own input), which saves a tensor's allocation and a pass over memory.
// gelu's backward needs its input, so it makes a new tensor.
inline torch::Tensor activate(Activation a, torch::Tensor x) {
  switch (a) {
    case Activation::gelu: return torch::gelu(x);
    case Activation::tanh: return x.tanh_();
    case Activation::relu: break;
  }
  return x.relu_();
}

}  // namespace plugtrain::models
