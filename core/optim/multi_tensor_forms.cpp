#include "optim/multi_tensor_forms.h"

#include <ATen/ATen.h>
#include <c10/util/Exception.h>

namespace plugtrain {

namespace {

using Tensors = ListOps::Tensors;
using List = ListOps::List;
using Scalars = ListOps::Scalars;

class ForeachOps final : public ListOps {
 public:
  Tensors add(List a, List b, const at::Scalar& alpha) const override { return at::_foreach_add(a, b, alpha); }
  Tensors mul(List a, const at::Scalar& s) const override { return at::_foreach_mul(a, s); }
  Tensors sqrt(List a) const override { return at::_foreach_sqrt(a); }
  Tensors addcmul(List a, List b, List c, const at::Scalar& value) const override {
    return at::_foreach_addcmul(a, b, c, value);
  }
  void add_(List a, List b, const at::Scalar& alpha) const override { at::_foreach_add_(a, b, alpha); }
  void add_(List a, const at::Scalar& s) const override { at::_foreach_add_(a, s); }
  void mul_(List a, const at::Scalar& s) const override { at::_foreach_mul_(a, s); }
  void div_(List a, Scalars s) const override { at::_foreach_div_(a, s); }
  void addcmul_(List a, List b, List c, const at::Scalar& value) const override {
    at::_foreach_addcmul_(a, b, c, value);
  }
  void addcdiv_(List a, List b, List c, const at::Scalar& value) const override {
    at::_foreach_addcdiv_(a, b, c, value);
  }
  void addcdiv_(List a, List b, List c, Scalars values) const override { at::_foreach_addcdiv_(a, b, c, values); }
  void maximum_(List a, List b) const override { at::_foreach_maximum_(a, b); }
  void sqrt_(List a) const override { at::_foreach_sqrt_(a); }
  void sign_(List a) const override { at::_foreach_sign_(a); }
};

// Each operation as torch::optim's loops call it on one tensor.
class LoopOps final : public ListOps {
 public:
  Tensors add(List a, List b, const at::Scalar& alpha) const override {
    return each(a, [&](std::size_t i) { return a[i].add(b[i], alpha); });
  }
  Tensors mul(List a, const at::Scalar& s) const override {
    return each(a, [&](std::size_t i) { return a[i].mul(s); });
  }
  Tensors sqrt(List a) const override {
    return each(a, [&](std::size_t i) { return a[i].sqrt(); });
  }
  Tensors addcmul(List a, List b, List c, const at::Scalar& value) const override {
    return each(a, [&](std::size_t i) { return a[i].addcmul(b[i], c[i], value); });
  }
  void add_(List a, List b, const at::Scalar& alpha) const override {
    for (std::size_t i = 0; i < a.size(); ++i) a[i].add_(b[i], alpha);
  }
  void add_(List a, const at::Scalar& s) const override {
    for (const auto& t : a) t.add_(s);
  }
  void mul_(List a, const at::Scalar& s) const override {
    for (const auto& t : a) t.mul_(s);
  }
  void div_(List a, Scalars s) const override {
    for (std::size_t i = 0; i < a.size(); ++i) a[i].div_(s[i]);
  }
  void addcmul_(List a, List b, List c, const at::Scalar& value) const override {
    for (std::size_t i = 0; i < a.size(); ++i) a[i].addcmul_(b[i], c[i], value);
  }
  void addcdiv_(List a, List b, List c, const at::Scalar& value) const override {
    for (std::size_t i = 0; i < a.size(); ++i) a[i].addcdiv_(b[i], c[i], value);
  }
  void addcdiv_(List a, List b, List c, Scalars values) const override {
    for (std::size_t i = 0; i < a.size(); ++i) a[i].addcdiv_(b[i], c[i], values[i]);
  }
  void maximum_(List a, List b) const override {  // torch::optim::Adam's max_out(max, exp_avg_sq, max)
    for (std::size_t i = 0; i < a.size(); ++i) {
      at::Tensor out = a[i];
      at::max_out(out, b[i], a[i]);
    }
  }
  void sqrt_(List a) const override {
    for (const auto& t : a) t.sqrt_();
  }
  void sign_(List a) const override {
    for (const auto& t : a) t.sign_();
  }

 private:
  template <class F>
  static Tensors each(List a, F f) {
    Tensors out;
    out.reserve(a.size());
    for (std::size_t i = 0; i < a.size(); ++i) out.push_back(f(i));
    return out;
  }
};

// foreach and loop: the algorithm's arithmetic in their list operations; host numbers only.
class ListForm final : public OptimizerForm {
 public:
  ListForm(OptimizerImpl impl, const ListOps& ops) : impl_(impl), ops_(ops) {}
  OptimizerImpl impl() const override { return impl_; }
  void step(MultiTensorAlgorithm& algorithm, GroupLists& l, const torch::optim::OptimizerOptions& options,
            const at::Tensor&) const override {
    algorithm.update(ops_, l, options);
  }

 private:
  OptimizerImpl impl_;
  const ListOps& ops_;
};

class FusedForm final : public OptimizerForm {
 public:
  OptimizerImpl impl() const override { return OptimizerImpl::fused; }
  at::Tensor lay_out(const at::Tensor& state, const at::Tensor& param) const override {
    return laid_out_as(state, param);
  }
  void built(GroupLists& l) const override {
    if (!l.counts.empty()) l.make_step_counts();
  }
  void step(MultiTensorAlgorithm& algorithm, GroupLists& l, const torch::optim::OptimizerOptions& options,
            const at::Tensor& found_inf) const override {
    l.lay_out_grads();
    if (l.steps.defined()) l.steps.add_(1);
    const at::Tensor& lr = l.lr_tensor(options.get_lr());
    const std::optional<at::Tensor> skip = found_inf.defined() ? std::optional<at::Tensor>(found_inf) : std::nullopt;
    algorithm.fused_update(l, options, lr, skip);
    if (skip && l.steps.defined()) l.steps.sub_(*skip);  // a skipped step is not counted (PyTorch's _fused_adam)
  }
};

}  // namespace

void MultiTensorAlgorithm::fused_update(GroupLists&, const Options&, const at::Tensor&,
                                        const std::optional<at::Tensor>&) {
  TORCH_CHECK(false, "this optimizer has no fused kernel (config/optimizer_table.cpp): use the foreach or loop form");
}

const OptimizerForm& optimizer_form(OptimizerImpl impl) {
  static const ForeachOps foreach_ops;
  static const LoopOps loop_ops;
  static const FusedForm fused;
  static const ListForm foreach (OptimizerImpl::foreach, foreach_ops), loop(OptimizerImpl::loop, loop_ops);
  switch (impl) {
    case OptimizerImpl::fused: return fused;
    case OptimizerImpl::foreach: return foreach;
    case OptimizerImpl::loop: return loop;
  }
  return foreach;  // unreachable: every OptimizerImpl has its form
}

}  // namespace plugtrain
