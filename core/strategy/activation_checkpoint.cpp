#include "strategy/activation_checkpoint.h"

#include <mutex>
#include <optional>

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Context.h>
#include <ATen/autocast_mode.h>
#include <ATen/core/Generator.h>
#include <ATen/ops/empty.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/csrc/autograd/custom_function.h>
#include <torch/custom_class.h>

namespace plugtrain {

namespace {

// A generator's state, taken and put back under its lock.
at::Tensor state_of(at::Generator generator) {
  std::lock_guard<std::mutex> lock(generator.mutex());
  return generator.get_state();
}
void set_state(at::Generator generator, const at::Tensor& state) {
  std::lock_guard<std::mutex> lock(generator.mutex());
  generator.set_state(state);
}

// The random state a unit's forward drew from: the CPU's and its device's generators.
struct RandomState {
  explicit RandomState(c10::Device device) {
    cpu = state_of(cpu_generator());
    if (device.is_cpu()) return;
    try {
      device_generator = at::globalContext().defaultGenerator(device);
      device_state = state_of(*device_generator);
    } catch (const c10::Error&) {
      device_generator.reset();  // a device without a generator draws no random numbers
    }
  }
  void put_back() const {
    set_state(cpu_generator(), cpu);
    if (device_generator) set_state(*device_generator, device_state);
  }
  static at::Generator& cpu_generator() {
    static at::Generator generator = at::detail::getDefaultCPUGenerator();
    return generator;
  }
  at::Tensor cpu;
  std::optional<at::Generator> device_generator;
  at::Tensor device_state;
};

// Autocast as the forward ran it: the recompute must cast as it did.
struct AutocastState {
  explicit AutocastState(c10::DeviceType type)
      : type(type), enabled(at::autocast::is_autocast_enabled(type)), dtype(at::autocast::get_autocast_dtype(type)) {}
  c10::DeviceType type;
  bool enabled;
  at::ScalarType dtype;
};

class AutocastAs {
 public:
  explicit AutocastAs(const AutocastState& wanted) : now_(wanted.type) {
    at::autocast::set_autocast_enabled(wanted.type, wanted.enabled);
    at::autocast::set_autocast_dtype(wanted.type, wanted.dtype);
    if (wanted.enabled) at::autocast::increment_nesting();
    nested_ = wanted.enabled;
  }
  ~AutocastAs() {
    if (nested_ && at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
    at::autocast::set_autocast_enabled(now_.type, now_.enabled);
    at::autocast::set_autocast_dtype(now_.type, now_.dtype);
  }
  AutocastAs(const AutocastAs&) = delete;
  AutocastAs& operator=(const AutocastAs&) = delete;

 private:
  AutocastState now_;
  bool nested_ = false;
};

// What backward needs beyond the input: the forward itself and the state it ran in.
struct Recompute : torch::CustomClassHolder {
  Recompute(UnitForward f, c10::Device device) : forward(std::move(f)), random(device), autocast(device.type()) {}
  UnitForward forward;
  RandomState random;
  AutocastState autocast;
};

struct CheckpointedUnit : torch::autograd::Function<CheckpointedUnit> {
  // `anchor`: a tensor that needs a gradient, so that the output is part of the graph, and the
  // unit's parameters get theirs, even where the input needs none.
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& input, const at::Tensor& anchor,
                            c10::intrusive_ptr<Recompute> recompute) {
    (void)anchor;
    ctx->save_for_backward({input});
    ctx->saved_data["recompute"] = c10::IValue::make_capsule(recompute);
    at::NoGradGuard no_grad;
    return recompute->forward(input);
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const at::Tensor input = ctx->get_saved_variables().at(0);
    auto recompute = c10::static_intrusive_pointer_cast<Recompute>(ctx->saved_data["recompute"].toCapsule());
    const RandomState now(input.device());
    recompute->random.put_back();
    at::Tensor again = input.detach();
    again.requires_grad_(input.requires_grad());
    at::Tensor output;
    {
      at::AutoGradMode grad(true);
      const AutocastAs autocast(recompute->autocast);
      output = recompute->forward(again);
    }
    now.put_back();  // what comes after backward draws as it would have without the recompute
    // The unit's parameters get their gradients here; the input's goes on up the graph.
    if (output.requires_grad()) torch::autograd::backward({output}, {grads.at(0)});
    return {again.requires_grad() ? again.grad() : at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

const at::Tensor& anchor() {
  static const at::Tensor tensor = at::empty({0}).requires_grad_(true);
  return tensor;
}

}  // namespace

at::Tensor run_checkpointed(const at::Tensor& input, const UnitForward& forward) {
  if (!at::GradMode::is_enabled()) return forward(input);
  auto recompute = c10::make_intrusive<Recompute>(forward, input.device());
  return CheckpointedUnit::apply(input, anchor(), std::move(recompute));
}

}  // namespace plugtrain
