// The kernels the trainer's optimizers and precisions issue (core/train: multi_tensor_adam.cpp,
// multi_tensor_sgd.cpp, multi_tensor_forms.cpp's ForeachOps, precision.cpp), called as the
// trainer calls them, on the device and on the CPU from the same parameters, gradients and
// state. The fused kernels are checked where the trainer uses them on this device
// (resolve_optimizer_impl: "auto" picks fused where ATen has the device's kernel, else foreach).
#include <ATen/ATen.h>

#include <algorithm>
#include <limits>

#include "config/choices.h"
#include "diagnose/conformance_checks.h"
#include "optim/fused_optimizers.h"

namespace plugtrain {

namespace {

using Tensors = std::vector<at::Tensor>;
using Named = std::vector<std::pair<std::string, Tensors>>;  // what a call left, to compare

// Three tensors of awkward sizes, as an optimizer group's parameters.
const std::vector<std::vector<std::int64_t>> kShapes = {{7}, {5, 3}, {4, 2, 3}};

Tensors list(at::Generator& gen, bool positive) {
  Tensors out;
  for (const auto& shape : kShapes)
    out.push_back(positive ? at::rand(shape, gen, at::kFloat) + 0.5 : at::randn(shape, gen, at::kFloat));
  return out;
}

Tensors on(const Tensors& tensors, c10::Device device) {
  Tensors out;
  for (const auto& t : tensors) out.push_back(copy_to(t, device));
  return out;
}

// The inputs of one case, made once on the CPU; each run gets its own copies on its device.
struct Lists {
  Tensors a, b, c, d;  // a, b: normal; c, d: positive (divisors, square roots)
  Lists to(c10::Device device) const { return {on(a, device), on(b, device), on(c, device), on(d, device)}; }
};

CheckResult compare(ConformanceTarget& t, const Lists& inputs, const std::function<Named(Lists&, c10::Device)>& call,
                    const std::string& summary) {
  Lists cpu = inputs.to(c10::Device(c10::kCPU)), device = inputs.to(t.device);
  const Named want = call(cpu, c10::Device(c10::kCPU));
  const Named got = call(device, t.device);
  Comparison c;
  for (std::size_t i = 0; i < want.size(); ++i)
    for (std::size_t j = 0; j < want[i].second.size(); ++j)
      c.close(want[i].first + "[" + std::to_string(j) + "]", got[i].second.at(j), want[i].second[j]);
  return c.result(summary);
}

// The learning rate as a tensor, as GroupLists::lr_tensor makes it.
at::Tensor lr_tensor(double lr, c10::Device device) {
  return at::full({}, lr, at::TensorOptions().device(device).dtype(device.is_cpu() ? at::kDouble : at::kFloat));
}

// Two steps of `name`'s fused kernel from fresh state, the step counts a float tensor on the
// device whose elements the kernel reads (GroupLists::step_views), advanced before each step.
Named fused_steps(OptimizerName name, Lists& l, c10::Device device) {
  const at::Tensor lr = lr_tensor(0.01, device);
  Tensors& params = l.a;
  Tensors zeros1, zeros2, zeros3;
  for (const auto& p : params) {
    zeros1.push_back(at::zeros_like(p));
    zeros2.push_back(at::zeros_like(p));
    zeros3.push_back(at::zeros_like(p));
  }
  const at::Tensor steps =
      at::zeros({std::int64_t(params.size())}, at::TensorOptions().dtype(at::kFloat).device(device));
  Tensors step_views;
  for (std::int64_t i = 0; i < steps.numel(); ++i) step_views.push_back(steps.select(0, i));
  for (int step = 0; step < 2; ++step) {
    const Tensors& grads = step == 0 ? l.b : l.c;
    steps.add_(1);
    if (name == OptimizerName::sgd)
      at::_fused_sgd_(params, grads, zeros1, /*weight_decay=*/1e-4, /*momentum=*/0.9, lr, /*dampening=*/0.0,
                      /*nesterov=*/step == 1, /*maximize=*/false, /*is_first_step=*/step == 0);
    else if (name == OptimizerName::adam)  // without amsgrad, so no max_exp_avg_sq list
      at::_fused_adam_(params, grads, zeros1, zeros2, {}, step_views, lr, 0.9, 0.999, /*weight_decay=*/1e-4, 1e-8,
                       /*amsgrad=*/false, /*maximize=*/false);
    else
      at::_fused_adamw_(params, grads, zeros1, zeros2, zeros3, step_views, lr, 0.9, 0.999, /*weight_decay=*/1e-2, 1e-8,
                        /*amsgrad=*/true, /*maximize=*/false);
  }
  if (name == OptimizerName::sgd) return {{"param", params}, {"momentum_buffer", zeros1}};
  Named out = {{"param", params}, {"exp_avg", zeros1}, {"exp_avg_sq", zeros2}};
  if (name == OptimizerName::adamw) out.push_back({"max_exp_avg_sq", zeros3});
  return out;
}

CheckResult check_fused(ConformanceTarget& t, OptimizerName name, const Lists& inputs) {
  if (resolve_optimizer_impl(name, std::nullopt, inputs.to(t.device).a) != OptimizerImpl::fused)
    return skip(std::string("ATen has no fused ") + word_of(name) +
                " kernel for this device: the trainer steps it in the foreach form (the _foreach_ rows)");
  const std::string what = name == OptimizerName::sgd    ? "momentum 0.9, then Nesterov"
                           : name == OptimizerName::adam ? "L2 weight decay"
                                                         : "amsgrad, decoupled weight decay";
  return compare(
      t, inputs, [&](Lists& l, c10::Device d) { return fused_steps(name, l, d); },
      "2 steps over 3 tensors (" + what + "), learning rate as a tensor");
}

struct ForeachCase {
  std::string name;
  std::function<Named(Lists&, c10::Device)> call;
};

// Each operation of ForeachOps (optim/multi_tensor_forms.cpp) and clip_grad_norm's two.
std::vector<ForeachCase> foreach_table() {
  static const std::vector<at::Scalar> scalars = {2.0, 0.5, -3.0};
  auto out = [](Tensors r) { return Named{{"result", std::move(r)}}; };
  auto in_place = [](const Tensors& a) { return Named{{"self", a}}; };
  return {
      {"_foreach_add", [=](Lists& l, c10::Device) { return out(at::_foreach_add(l.a, l.b, 0.5)); }},
      {"_foreach_mul", [=](Lists& l, c10::Device) { return out(at::_foreach_mul(l.a, 0.9)); }},
      {"_foreach_sqrt", [=](Lists& l, c10::Device) { return out(at::_foreach_sqrt(l.c)); }},
      {"_foreach_addcmul", [=](Lists& l, c10::Device) { return out(at::_foreach_addcmul(l.a, l.b, l.c, 0.1)); }},
      {"_foreach_add_ list",
       [=](Lists& l, c10::Device) {
         at::_foreach_add_(l.a, l.b, -0.5);
         return in_place(l.a);
       }},
      {"_foreach_add_ scalar",
       [=](Lists& l, c10::Device) {
         at::_foreach_add_(l.a, 0.25);
         return in_place(l.a);
       }},
      {"_foreach_mul_ scalar",
       [=](Lists& l, c10::Device) {
         at::_foreach_mul_(l.a, 0.9);
         return in_place(l.a);
       }},
      {"_foreach_mul_ tensor",
       [=](Lists& l, c10::Device d) {
         at::_foreach_mul_(l.a, at::full({}, 0.7, at::TensorOptions().device(d)));
         return in_place(l.a);
       }},
      {"_foreach_div_ scalars",
       [=](Lists& l, c10::Device) {
         at::_foreach_div_(l.a, scalars);
         return in_place(l.a);
       }},
      {"_foreach_addcmul_",
       [=](Lists& l, c10::Device) {
         at::_foreach_addcmul_(l.a, l.b, l.c, 0.1);
         return in_place(l.a);
       }},
      {"_foreach_addcdiv_ scalar",
       [=](Lists& l, c10::Device) {
         at::_foreach_addcdiv_(l.a, l.b, l.c, -0.01);
         return in_place(l.a);
       }},
      {"_foreach_addcdiv_ scalars",
       [=](Lists& l, c10::Device) {
         at::_foreach_addcdiv_(l.a, l.b, l.c, scalars);
         return in_place(l.a);
       }},
      {"_foreach_maximum_",
       [=](Lists& l, c10::Device) {
         at::_foreach_maximum_(l.a, l.b);
         return in_place(l.a);
       }},
      {"_foreach_sqrt_",
       [=](Lists& l, c10::Device) {
         at::_foreach_sqrt_(l.c);
         return in_place(l.c);
       }},
      {"_foreach_sign_",
       [=](Lists& l, c10::Device) {
         at::_foreach_sign_(l.a);
         return in_place(l.a);
       }},
      {"_foreach_norm", [=](Lists& l, c10::Device) { return out(at::_foreach_norm(l.a, 2)); }},
  };
}

// fp16's loss scaling (train/precision.cpp): unscale with an overflow in one gradient, then the
// scale's update after an overflow and after a clean step.
Named amp_calls(Lists& l, c10::Device device) {
  const auto f32 = at::TensorOptions().dtype(at::kFloat).device(device);
  l.a[1].view(-1)[2].fill_(std::numeric_limits<float>::infinity());
  at::Tensor found_inf = at::zeros({}, f32);
  at::_amp_foreach_non_finite_check_and_unscale_(l.a, found_inf, at::full({}, 1.0 / 1024, f32));
  at::Tensor clean_found = at::zeros({}, f32);
  at::_amp_foreach_non_finite_check_and_unscale_(l.b, clean_found, at::full({}, 1.0 / 1024, f32));
  at::Tensor scale = at::full({}, 65536.0, f32);
  at::Tensor tracker = at::zeros({}, at::TensorOptions().dtype(at::kInt).device(device));
  Tensors scales;
  at::_amp_update_scale_(scale, tracker, found_inf, 2.0, 0.5, /*growth_interval=*/1);
  scales.push_back(scale.clone());
  at::_amp_update_scale_(scale, tracker, clean_found, 2.0, 0.5, /*growth_interval=*/1);
  scales.push_back(scale.clone());
  return {{"grads", l.a},
          {"clean grads", l.b},
          {"found_inf", {found_inf, clean_found}},
          {"scale", scales},
          {"growth_tracker", {tracker}}};
}

}  // namespace

std::vector<CheckResult> check_optimizer_kernels(ConformanceTarget& t) {
  at::Generator gen = seeded(7);
  const Lists inputs{list(gen, false), list(gen, false), list(gen, true), list(gen, true)};
  std::vector<CheckResult> rows;
  for (OptimizerName name : {OptimizerName::sgd, OptimizerName::adam, OptimizerName::adamw}) {
    const std::string op = std::string("_fused_") + word_of(name) + "_";
    rows.push_back(run_check("optimizer", op, [&] { return check_fused(t, name, inputs); }));
  }
  for (const ForeachCase& c : foreach_table())
    rows.push_back(run_check("optimizer", c.name, [&] { return compare(t, inputs, c.call, "3 tensors"); }));
  const std::vector<std::string> precisions = t.backend->capabilities().autocast_precisions;
  const bool fp16 = std::find(precisions.begin(), precisions.end(), word_of(PrecisionMode::fp16)) != precisions.end();
  rows.push_back(run_check("optimizer", "_amp_ unscale and update_scale", [&] {
    return fp16 ? compare(t, inputs, amp_calls, "fp16 loss scaling with and without an overflow")
                : skip("the backend's capabilities list no fp16 autocast, so the trainer never scales a loss here");
  }));
  return rows;
}

}  // namespace plugtrain
