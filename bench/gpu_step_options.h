// gpu_step_bench's command line, and the figures of its GPT-2-small row: model FLOPs per token
// and the device's dense bf16 peak, for model FLOPs utilisation (MFU).
#pragma once

#include <cstdint>
#include <cstdlib>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace plugtrain::bench {

struct GpuStepOptions {
  int rounds = 3;
  std::int64_t steps = 200;     // per measurement of the small models
  std::int64_t gpt_steps = 20;  // per measurement of gpt2 (a step is ~10 ms on an H200)
  std::int64_t gpt_context = 1024, gpt_batch = 8;
  std::vector<std::string> only;                           // models: mlp, convnet, resnet18, gpt2 (empty: all)
  std::vector<std::string> precisions = {"fp32", "bf16"};  // of the small models (gpt2: bf16 only)
  // PyTorch's torch.compile modes measured beside eager (--no-compile: none).
  std::vector<std::string> compile_modes = {"reduce-overhead", "max-autotune-no-cudagraphs"};
  double compile_budget_s = 0;   // > 0: no compilation starts after this many seconds of the bench
  double deadline_s = 0;         // > 0: no round starts that would end after it (one always runs)
  bool host_side = true;         // plugtrain's host-data side of the small models (--no-host: not)
  double peak_tflops = 0;        // > 0: the device's dense bf16 peak, instead of the table's
  std::string backend = "cuda";  // another one (cpu) checks the bench's own paths with tiny shapes
};

inline constexpr const char* kGpuStepUsage =
    "usage: gpu_step_bench [--rounds N] [--steps N] [--gpt-steps N] [--gpt-context N] [--gpt-batch N]\n"
    "                      [--only mlp,convnet,resnet18,gpt2] [--precisions fp32,bf16] [--no-compile]\n"
    "                      [--modes reduce-overhead,max-autotune-no-cudagraphs]"
    " [--compile-budget SECONDS] [--deadline SECONDS]\n"
    "                      [--no-host] [--peak-tflops X] [--backend NAME]";

inline std::vector<std::string> comma_list(const std::string& text) {
  std::vector<std::string> items;
  std::stringstream list(text);
  for (std::string item; std::getline(list, item, ',');)
    if (!item.empty()) items.push_back(item);
  return items;
}

// Throws std::invalid_argument with one line naming the bad argument.
inline GpuStepOptions parse_gpu_step_options(int argc, char** argv) {
  GpuStepOptions o;
  auto value = [&](int& i) -> std::string {
    if (i + 1 >= argc) throw std::invalid_argument(std::string(argv[i]) + " needs a value");
    return argv[++i];
  };
  auto number = [&](int& i, double low) {
    const std::string flag = argv[i], text = value(i);
    char* end = nullptr;
    const double v = std::strtod(text.c_str(), &end);
    if (end == text.c_str() || *end != '\0' || !(v >= low))
      throw std::invalid_argument(flag + " takes a number >= " + std::to_string(int(low)) + ", not '" + text + "'");
    return v;
  };
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--rounds")
      o.rounds = int(number(i, 1));
    else if (a == "--steps")
      o.steps = std::int64_t(number(i, 1));
    else if (a == "--gpt-steps")
      o.gpt_steps = std::int64_t(number(i, 1));
    else if (a == "--gpt-context")
      o.gpt_context = std::int64_t(number(i, 8));
    else if (a == "--gpt-batch")
      o.gpt_batch = std::int64_t(number(i, 1));
    else if (a == "--only")
      o.only = comma_list(value(i));
    else if (a == "--precisions")
      o.precisions = comma_list(value(i));
    else if (a == "--no-compile")
      o.compile_modes.clear();
    else if (a == "--modes")
      o.compile_modes = comma_list(value(i));
    else if (a == "--compile-budget")
      o.compile_budget_s = number(i, 0);
    else if (a == "--deadline")
      o.deadline_s = number(i, 0);
    else if (a == "--no-host")
      o.host_side = false;
    else if (a == "--peak-tflops")
      o.peak_tflops = number(i, 0);
    else if (a == "--backend")
      o.backend = value(i);
    else
      throw std::invalid_argument("unknown argument '" + a + "'");
  }
  for (const std::string& m : o.only)
    if (m != "mlp" && m != "convnet" && m != "resnet18" && m != "gpt2")
      throw std::invalid_argument("--only: no model '" + m + "' (mlp, convnet, resnet18, gpt2)");
  for (const std::string& p : o.precisions)
    if (p != "fp32" && p != "bf16") throw std::invalid_argument("--precisions: '" + p + "' is not fp32 or bf16");
  for (const std::string& m : o.compile_modes)
    if (m != "reduce-overhead" && m != "max-autotune-no-cudagraphs" && m != "default" && m != "max-autotune")
      throw std::invalid_argument("--modes: '" + m + "' is not a torch.compile mode");
  return o;
}

// The GPT-2-small shape: 12 layers, 12 heads, width 768, vocabulary 50304.
struct GptShape {
  std::int64_t layers = 12, heads = 12, width = 768, vocab = 50304, context = 1024;
  // Parameters without the position embedding (nanoGPT's get_num_params(non_embedding=True));
  // the token embedding counts once, tied to the output layer. Per block: attention 4d^2 + 4d,
  // MLP 8d^2 + 5d, two layer norms 4d; then the final layer norm.
  double parameters() const {
    const double d = double(width);
    return double(layers) * (12 * d * d + 13 * d) + double(vocab) * d + 2 * d;
  }
  // nanoGPT's and PaLM's model FLOPs per trained token: 6N + 12 L H Q T (Q: the head width).
  double flops_per_token() const {
    return 6 * parameters() + 12.0 * double(layers) * double(heads) * double(width / heads) * double(context);
  }
};

// The device's dense bf16 peak in TFLOPS by its name (no sparsity), or nullopt when unknown.
inline std::optional<double> bf16_peak_tflops(const std::string& device_name) {
  const auto has = [&](const char* s) { return device_name.find(s) != std::string::npos; };
  if (has("H200")) return 989.0;
  if (has("H100") && !has("PCIe") && !has("NVL")) return 989.0;  // SXM
  if (has("A100")) return 312.0;
  return std::nullopt;
}

}  // namespace plugtrain::bench
