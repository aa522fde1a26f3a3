#include "run/device_settings.h"

#include <ATen/ATen.h>
#include <ATen/Context.h>
#include <ATen/core/grad_mode.h>

#include <cstdlib>

namespace plugtrain {

namespace {

bool has_conv2d_weights(Model& model) {
  for (const auto& p : model.parameters())
    if (p.dim() == 4) return true;
  return false;
}

}  // namespace

DeviceSettings apply_device_settings(const Experiment& e, bool accelerator, Model& model) {
  DeviceSettings s;
  auto& context = at::globalContext();
  // PyTorch's defaults unless the experiment says: convolutions in TF32, matrix products not.
  const bool matmul = e.train.tf32 == true, conv = e.train.tf32 != false;
  context.setAllowTF32CuBLAS(matmul);
  context.setAllowTF32CuDNN(conv);
  const bool benchmark = e.train.cudnn_benchmark && !e.train.deterministic;
  context.setBenchmarkCuDNN(benchmark);
  context.setDeterministicCuDNN(e.train.deterministic);
  if (e.train.deterministic) {
    // cuBLAS is deterministic only with a fixed workspace, read when LibTorch makes its handles
    // (after this, at the run's first matrix product); an operator with no deterministic
    // implementation warns once and runs, as PyTorch's warn_only does.
    setenv("CUBLAS_WORKSPACE_CONFIG", ":4096:8", /*overwrite=*/0);
  }
  context.setDeterministicAlgorithms(e.train.deterministic, /*warn_only=*/true);
  std::string line;
  if (accelerator)
    line = std::string("tf32 matmul ") + (matmul ? "on" : "off") + ", convolutions " + (conv ? "on" : "off") +
           (!e.train.tf32 ? " (PyTorch's defaults)" : " (train.tf32)") + "; cuDNN benchmark " +
           (benchmark ? "on" : "off") + (e.train.deterministic ? "; deterministic algorithms (train.deterministic)" : "");
  const bool convolutional = has_conv2d_weights(model);
  const bool channels_last =
      e.train.memory_format == MemoryFormatChoice::channels_last || (!e.train.memory_format && convolutional);
  if (channels_last) {
    s.memory_format = at::MemoryFormat::ChannelsLast;
    convert_memory_format(model, s.memory_format);
  }
  if (convolutional || e.train.memory_format) {
    line += std::string(line.empty() ? "" : "; ") + "memory format " + (channels_last ? "channels-last" : "contiguous") +
            (e.train.memory_format ? " (train.memory_format)" : " (auto: a model with 2-d convolutions)");
  }
  s.line = line;
  return s;
}

// As PyTorch's Module.to(memory_format=...): Tensor.to, not contiguous(). A weight whose layout
// is ambiguous (a 1x1 convolution's [O, I, 1, 1], a depthwise [C, 1, k, k], a one-channel stem)
// already counts as channels-last contiguous, so contiguous() keeps its NCHW strides; then a
// convolution on an input just as ambiguous (squeeze-and-excitation's [N, C, 1, 1], a head after
// global pooling) runs in the other layout, with other rounding, than in PyTorch. to() gives
// every 4-d tensor the format's own strides (MobileNetV3 drifted from eager from the first step).
void convert_memory_format(Model& model, at::MemoryFormat format) {
  if (format == at::MemoryFormat::Contiguous) return;
  at::NoGradGuard no_grad;
  const auto restride = [format](at::Tensor t) {
    if (t.dim() == 4) t.set_data(t.to(t.options(), /*non_blocking=*/false, /*copy=*/false, format));
  };
  for (auto& p : model.parameters()) restride(p);
  for (auto& b : model.buffers()) restride(b);
}

}  // namespace plugtrain
