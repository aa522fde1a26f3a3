// One training step of each registered model (every models plugin's, through the catalog),
// on the device and on the CPU: the model built once on the CPU with its default options (but
// dropout) for a small input, a second instance given the same state and moved to the device, the same batch, one step of the
// trainer's SGD (make_optimizer, momentum 0.9), then the loss, the logits, every gradient, and
// every parameter and buffer after the step compared.
#include <ATen/ATen.h>
#include <torch/nn/module.h>
#include <torch/utils.h>

#include "data/model_description.h"
#include "diagnose/conformance_checks.h"
#include "optim/optimizers.h"
#include "plugins/model_forward.h"
#include "util/format.h"
#include "util/text.h"

namespace plugtrain {

namespace {

// The largest model trained without --all-models: every bundled model but wide_resnet50_2
// (67M parameters), whose two copies and their momentum alone are 1.6 GB, and which would take
// as long as all the others together on a small CPU.
constexpr std::int64_t kLargeModelParameters = 50'000'000;
constexpr std::int64_t kBatch = 2;  // two samples: batch norm needs more than one value per channel
constexpr std::int64_t kClasses = 10;

// Inputs tried in turn, smallest first, until the model accepts one with its options: small
// images keep the deep models cheap on a CPU (a VGG needs 32x32, an MLP takes anything).
const std::vector<std::vector<std::int64_t>> kInputShapes = {
    {3, 16, 16}, {3, 32, 32}, {1, 28, 28}, {3, 64, 64}, {3, 224, 224}};

// Dropout draws its masks from the device's own generator, which no other device can repeat:
// an option named "dropout" is set to 0 (the bundled models' convention, which also covers a
// functional dropout in forward), and Dropout modules are held in eval mode (the identity);
// everything else trains, batch norm included.
constexpr const char* kDropoutOption = "dropout";

bool without_dropout(const ModelSpec& spec, std::map<std::string, OptionValue>& values) {
  for (const auto& o : spec.options)
    if (const double* rate = std::get_if<double>(&o.default_value); o.name == kDropoutOption && rate && *rate != 0.0) {
      values[o.name] = 0.0;
      return true;
    }
  return false;
}

int hold_dropout(torch::nn::Module& model) {
  int held = 0;
  for (const auto& m : model.modules(/*include_self=*/false))
    if (m->name().find("Dropout") != std::string::npos) {
      m->eval();
      ++held;
    }
  return held;
}

struct Step {
  at::Tensor loss, logits;
};

Step train_one_step(Model& model, const at::Tensor& x, const at::Tensor& y, c10::Device device) {
  Experiment e;
  e.optim.name = OptimizerName::sgd;
  e.optim.lr = 0.1;
  e.optim.momentum = 0.9;
  std::unique_ptr<torch::optim::Optimizer> optimizer = make_optimizer(e, e.optim.lr, model.parameters());
  optimizer->zero_grad();
  torch::manual_seed(7);  // whatever randomness is left draws the same on both (a device's own generator too)
  Step s;
  s.logits = forward_input(model, copy_to(x, device));
  const at::Tensor target = copy_to(y, device);
  // Every pixel of a segmentation model's (N, classes, H, W) scores, and every step of a
  // sequence model's (N, T, classes), takes the sample's class.
  if (s.logits.dim() == 4)
    s.loss = at::cross_entropy_loss(s.logits, target.view({-1, 1, 1}).expand({y.size(0), s.logits.size(2), s.logits.size(3)}));
  else if (s.logits.dim() == 3)
    s.loss = at::cross_entropy_loss(s.logits.flatten(0, 1), target.repeat_interleave(s.logits.size(1)));
  else
    s.loss = at::cross_entropy_loss(s.logits, target);
  s.loss.backward();
  optimizer->step();
  return s;
}

// The model built on the CPU for the first input shape its factory takes (null: none, with why
// in `refused`), seeded so both copies start alike.
std::shared_ptr<Model> build_on_cpu(const ModelSpec& spec, const Options& options, ModelInputs& inputs,
                                    std::string& refused) {
  std::vector<std::string> tried;
  std::string first_error;
  for (const auto& shape : kInputShapes) {
    inputs = {shape, kClasses};
    tried.push_back(shape_text(shape));
    try {
      torch::manual_seed(1);
      const ModelDescription description = image_model_description(inputs.input_shape, inputs.num_classes);
      if (std::shared_ptr<Model> model = spec.batch_factory(description.batch, description.target, options))
        return model;
    } catch (const std::exception& e) {
      if (first_error.empty()) first_error = first_line(e.what());
    }
  }
  refused = "cannot be built with its default options for an input of " + join(tried, ", ") + ": " + first_error;
  return nullptr;
}

// A second copy with the CPU model's weights and buffers, on the device under test.
std::shared_ptr<Model> copy_to_device(const ModelSpec& spec, const Options& options, const ModelInputs& inputs,
                                      Model& cpu_model, c10::Device device) {
  const ModelDescription description = image_model_description(inputs.input_shape, inputs.num_classes);
  std::shared_ptr<Model> device_model = spec.batch_factory(description.batch, description.target, options);
  {
    torch::NoGradGuard no_grad;
    auto from = cpu_model.named_parameters();
    for (auto& p : device_model->named_parameters()) p.value().copy_(from[p.key()]);
    auto buffers = cpu_model.named_buffers();
    for (auto& b : device_model->named_buffers()) b.value().copy_(buffers[b.key()]);
  }
  device_model->to(device);
  return device_model;
}

// One step's loss, logits, gradients, weights and buffers, device against CPU. Gradients pass
// through every layer (and a device's reduction order), so they get more room.
Comparison compare_steps(const Step& got, const Step& want, Model& device_model, Model& cpu_model) {
  Comparison c;
  c.close("loss", got.loss, want.loss);
  c.close("logits", got.logits, want.logits);
  const auto cpu_parameters = cpu_model.named_parameters();
  for (const auto& p : device_model.named_parameters()) {
    const at::Tensor& reference = cpu_parameters[p.key()];
    if (reference.grad().defined() || p.value().grad().defined())
      c.close("grad " + p.key(), p.value().grad(), reference.grad(), Tolerance{1e-2, 1e-5});
    c.close(p.key() + " after the step", p.value(), reference);
  }
  const auto cpu_buffers = cpu_model.named_buffers();
  for (const auto& b : device_model.named_buffers())
    c.close(b.key() + " after the step", b.value(), cpu_buffers[b.key()]);
  return c;
}

CheckResult check_model(ConformanceTarget& t, const RegisteredModel& registered, bool all_models) {
  const ModelSpec& spec = registered.spec;
  std::map<std::string, OptionValue> values;
  for (const auto& o : spec.options) values[o.name] = o.default_value;
  const bool dropout_off = without_dropout(spec, values);
  const Options options(values);
  ModelInputs inputs;
  std::string refused;
  const std::shared_ptr<Model> cpu_model = build_on_cpu(spec, options, inputs, refused);
  if (!cpu_model) return skip(refused);
  std::int64_t parameters = 0;
  for (const auto& p : cpu_model->parameters()) parameters += p.numel();
  const std::string size =
      (parameters >= 1'000'000 ? fixed(double(parameters) / 1e6, 1) + "M" : fixed(double(parameters) / 1e3, 1) + "K") +
      " parameters";
  if (parameters > kLargeModelParameters && !all_models)
    return skip(size + ", more than the " + std::to_string(kLargeModelParameters / 1'000'000) +
                "M this check trains by default (--all-models trains it too)");

  const std::shared_ptr<Model> device_model = copy_to_device(spec, options, inputs, *cpu_model, t.device);
  cpu_model->train();
  device_model->train();
  const bool held = hold_dropout(*cpu_model) > 0;
  hold_dropout(*device_model);

  at::Generator gen = seeded(fnv1a_64(spec.name));
  std::vector<std::int64_t> batch_shape = {kBatch};
  batch_shape.insert(batch_shape.end(), inputs.input_shape.begin(), inputs.input_shape.end());
  const at::Tensor x = at::randn(batch_shape, gen, at::kFloat);
  const at::Tensor y = at::randint(0, kClasses, {kBatch}, gen, at::TensorOptions().dtype(at::kLong));
  const Step want = train_one_step(*cpu_model, x, y, c10::Device(c10::kCPU));
  const Step got = train_one_step(*device_model, x, y, t.device);
  return compare_steps(got, want, *device_model, *cpu_model)
      .result("input " + shape_text(batch_shape) + ", " + size + ", loss " + fixed(want.loss.item<double>(), 4) +
              (dropout_off ? ", dropout 0"
               : held      ? ", dropout held in eval"
                           : ""));
}

}  // namespace

std::vector<CheckResult> check_models(ConformanceTarget& t, bool all_models) {
  std::vector<CheckResult> rows;
  for (const RegisteredModel& m : t.host->models().all())
    rows.push_back(run_check("model", m.spec.name, [&] { return check_model(t, m, all_models); }));
  if (rows.empty())
    rows.push_back(run_check("model", "(none)", [] { return skip("no models plugin is loaded: no model to train"); }));
  return rows;
}

}  // namespace plugtrain
