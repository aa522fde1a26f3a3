// The operator table: each operator the bundled models train with, forward and backward, on the
// device and on the CPU from the same inputs and the same upstream gradient. Compared: the
// output, the gradient of every input and parameter, and any state the operator updates in
// place (batch norm's running statistics).
#include <ATen/ATen.h>

#include "diagnose/conformance_checks.h"
#include "util/format.h"

namespace plugtrain {

namespace {

struct Input {
  std::string name;
  at::Tensor value;   // on the CPU
  bool grad = false;  // a leaf whose gradient is compared; otherwise state compared after the call
};

using Inputs = std::vector<Input>;
using Tensors = std::vector<at::Tensor>;

struct OperatorCase {
  std::string name;
  std::function<Inputs(at::Generator&)> inputs;
  std::function<at::Tensor(const Tensors&)> forward;
};

at::Tensor normal(at::IntArrayRef shape, at::Generator& gen) { return at::randn(shape, gen, at::kFloat); }
at::Tensor positive(at::IntArrayRef shape, at::Generator& gen) { return at::rand(shape, gen, at::kFloat) + 0.5; }

Input x(at::IntArrayRef shape, at::Generator& gen) { return {"x", normal(shape, gen), true}; }

std::vector<OperatorCase> operator_table() {
  auto unary = [](std::string name, std::vector<std::int64_t> shape, std::function<at::Tensor(const at::Tensor&)> f) {
    return OperatorCase{std::move(name), [shape](at::Generator& g) { return Inputs{x(shape, g)}; },
                        [f](const Tensors& in) { return f(in[0]); }};
  };
  auto batch_norm = [](bool training) {
    return OperatorCase{std::string("batch_norm ") + (training ? "train" : "eval"),
                        [](at::Generator& g) {
                          return Inputs{x({4, 3, 5, 5}, g),
                                        {"weight", positive({3}, g), true},
                                        {"bias", normal({3}, g), true},
                                        {"running_mean", normal({3}, g) * 0.1, false},
                                        {"running_var", positive({3}, g), false}};
                        },
                        [training](const Tensors& in) {
                          return at::batch_norm(in[0], in[1], in[2], in[3], in[4], training,
                                                /*momentum=*/0.1, /*eps=*/1e-5, /*cudnn_enabled=*/true);
                        }};
  };
  return {
      {"linear",
       [](at::Generator& g) {
         return Inputs{x({8, 16}, g), {"weight", normal({12, 16}, g), true}, {"bias", normal({12}, g), true}};
       },
       [](const Tensors& in) { return at::linear(in[0], in[1], in[2]); }},
      {"conv2d",
       [](at::Generator& g) {
         return Inputs{x({2, 3, 10, 10}, g), {"weight", normal({6, 3, 3, 3}, g), true}, {"bias", normal({6}, g), true}};
       },
       [](const Tensors& in) { return at::conv2d(in[0], in[1], in[2], /*stride=*/1, /*padding=*/1); }},
      {"conv2d depthwise, stride 2",
       [](at::Generator& g) {
         return Inputs{x({2, 6, 9, 9}, g), {"weight", normal({6, 1, 3, 3}, g), true}};
       },
       [](const Tensors& in) { return at::conv2d(in[0], in[1], {}, /*stride=*/2, /*padding=*/1, /*dilation=*/1, 6); }},
      batch_norm(true),
      batch_norm(false),
      unary("relu", {4, 33}, [](const at::Tensor& t) { return at::relu(t); }),
      unary("relu6", {4, 33}, [](const at::Tensor& t) { return at::hardtanh(t * 4, 0, 6); }),
      unary("gelu", {4, 33}, [](const at::Tensor& t) { return at::gelu(t); }),
      unary("max_pool2d 2x2", {2, 3, 8, 8},
            [](const at::Tensor& t) {
              return at::max_pool2d(t, {2, 2});
            }),
      unary("max_pool2d 3x3, stride 2, padding 1", {2, 3, 9, 9},
            [](const at::Tensor& t) {
              return at::max_pool2d(t, {3, 3}, {2, 2}, {1, 1});
            }),
      unary("avg_pool2d 2x2", {2, 3, 8, 8},
            [](const at::Tensor& t) {
              return at::avg_pool2d(t, {2, 2});
            }),
      unary("adaptive_avg_pool2d", {2, 3, 9, 9},
            [](const at::Tensor& t) {
              return at::adaptive_avg_pool2d(t, {2, 2});
            }),
      unary("dropout eval", {4, 33}, [](const at::Tensor& t) { return at::dropout(t, 0.5, /*train=*/false); }),
      unary("softmax", {4, 10}, [](const at::Tensor& t) { return at::softmax(t, 1); }),
      unary("log_softmax", {4, 10}, [](const at::Tensor& t) { return at::log_softmax(t, 1); }),
      {"cross_entropy",
       [](at::Generator& g) {
         return Inputs{{"logits", normal({8, 10}, g), true},
                       {"targets", at::randint(0, 10, {8}, g, at::TensorOptions().dtype(at::kLong)), false}};
       },
       [](const Tensors& in) { return at::cross_entropy_loss(in[0], in[1]); }},
      {"matmul",
       [](at::Generator& g) {
         return Inputs{{"a", normal({6, 7}, g), true}, {"b", normal({7, 5}, g), true}};
       },
       [](const Tensors& in) { return at::matmul(in[0], in[1]); }},
      {"matmul batched",
       [](at::Generator& g) {
         return Inputs{{"a", normal({3, 4, 5}, g), true}, {"b", normal({3, 5, 6}, g), true}};
       },
       [](const Tensors& in) { return at::matmul(in[0], in[1]); }},
  };
}

CheckResult run_case(ConformanceTarget& t, const OperatorCase& op, std::uint64_t seed) {
  at::Generator gen = seeded(seed);
  const Inputs inputs = op.inputs(gen);
  Tensors cpu, device;
  for (const Input& in : inputs) {
    cpu.push_back(in.value.clone().requires_grad_(in.grad));
    device.push_back(copy_to(in.value, t.device).requires_grad_(in.grad));
  }
  const at::Tensor out_cpu = op.forward(cpu);
  const at::Tensor out_device = op.forward(device);
  Comparison c;
  c.close("output", out_device, out_cpu);
  int gradients = 0;
  if (c.ok() && out_cpu.requires_grad()) {
    const at::Tensor upstream = at::randn(out_cpu.sizes(), gen, out_cpu.scalar_type());
    out_cpu.backward(upstream);
    out_device.backward(copy_to(upstream, t.device));
    for (std::size_t i = 0; i < inputs.size(); ++i)
      if (inputs[i].grad) {
        c.close("grad " + inputs[i].name, device[i].grad(), cpu[i].grad());
        ++gradients;
      }
  }
  for (std::size_t i = 0; i < inputs.size(); ++i)
    if (!inputs[i].grad) c.close(inputs[i].name + " after the call", device[i], cpu[i]);
  const std::string shape = out_cpu.dim() == 0 ? "a scalar" : shape_text(out_cpu.sizes());
  return c.result("output " + shape + " and " + std::to_string(gradients) + " gradient" + (gradients == 1 ? "" : "s"));
}

}  // namespace

std::vector<CheckResult> check_operators(ConformanceTarget& t) {
  std::vector<CheckResult> rows;
  std::uint64_t seed = 100;
  for (const OperatorCase& op : operator_table())
    rows.push_back(run_check("op", op.name, [&] { return run_case(t, op, seed++); }));
  return rows;
}

}  // namespace plugtrain
