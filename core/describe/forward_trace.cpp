#include "describe/forward_trace.h"

#include <memory>
#include <optional>
#include <string>

namespace plugtrain {

namespace {

thread_local ForwardTrace* t_trace = nullptr;

struct OpContext : at::ObserverContext {
  std::size_t module = 0;
  std::int64_t per_output_element = 0;  // multiply-adds per output element
  std::int64_t fixed = 0;               // or a count known from the inputs alone
};

std::optional<std::size_t> owner(const ForwardTrace& t, const at::Tensor& x) {
  if (!x.defined()) return std::nullopt;
  if (auto it = t.by_impl.find(x.unsafeGetTensorImpl()); it != t.by_impl.end()) return it->second;
  if (!x.has_storage() || x.storage().nbytes() == 0) return std::nullopt;
  if (auto it = t.by_data.find(x.storage().data()); it != t.by_data.end()) return it->second;
  return std::nullopt;
}

// Multiply-adds of the operators that count (see describe/model_summary.h); the rest count 0.
void count_macs(OpContext& c, const std::string& op, c10::ArrayRef<const c10::IValue> in) {
  auto tensor = [&](std::size_t i) -> const at::Tensor* {
    return i < in.size() && in[i].isTensor() && in[i].toTensor().defined() ? &in[i].toTensor() : nullptr;
  };
  const at::Tensor* a = tensor(0);
  const at::Tensor* b = tensor(1);
  if (!a || !b) return;
  if (op == "aten::conv1d" || op == "aten::conv2d" || op == "aten::conv3d" || op == "aten::convolution" ||
      op == "aten::_convolution" || op == "aten::conv_transpose1d" || op == "aten::conv_transpose2d" ||
      op == "aten::conv_transpose3d") {
    if (b->dim() < 2 || b->size(0) == 0) return;
    const std::int64_t per = b->numel() / b->size(0);
    bool transposed = op.find("transpose") != std::string::npos;
    if (op == "aten::convolution" || op == "aten::_convolution")
      transposed = in.size() > 6 && in[6].isBool() && in[6].toBool();
    if (transposed) c.fixed = a->numel() * per;
    else c.per_output_element = per;
  } else if (op == "aten::linear") {
    c.per_output_element = b->size(-1);
  } else if (op == "aten::addmm") {  // bias, mat1, mat2
    if (const at::Tensor* m = tensor(1); m && m->dim() == 2) c.per_output_element = m->size(1);
  } else if (op == "aten::mm" || op == "aten::bmm" || op == "aten::matmul") {
    c.per_output_element = a->size(-1);
  }
}

std::unique_ptr<at::ObserverContext> on_start(const at::RecordFunction& fn) {
  ForwardTrace* t = t_trace;
  if (!t || t->inside > 0) return nullptr;
  try {
    std::optional<std::size_t> module;
    for (const c10::IValue& v : fn.inputs()) {
      if (v.isTensor()) module = owner(*t, v.toTensor());
      else if (v.isTensorList())
        for (const at::Tensor& x : v.toTensorList().vec())
          if ((module = owner(*t, x))) break;
      if (module) break;
    }
    if (!module) return nullptr;
    auto c = std::make_unique<OpContext>();
    c->module = *module;
    count_macs(*c, fn.name(), fn.inputs());
    ++t->inside;
    return c;
  } catch (const std::exception& e) {
    if (t->traced) t->traced = WhyNot{e.what()};
    return nullptr;
  }
}

void on_end(const at::RecordFunction& fn, at::ObserverContext* context) {
  ForwardTrace* t = t_trace;
  if (!t || !context) return;
  --t->inside;
  const auto& c = *static_cast<OpContext*>(context);
  const at::Tensor* out = nullptr;
  for (const c10::IValue& v : fn.outputs())
    if (v.isTensor() && v.toTensor().defined()) {
      out = &v.toTensor();
      break;
    }
  std::vector<std::int64_t> shape;
  if (out && out->dim() > 0) shape.assign(out->sizes().begin() + 1, out->sizes().end());  // per sample
  const std::int64_t macs = c.fixed + (out ? c.per_output_element * out->numel() : 0);
  if (!t->rows.empty() && t->rows.back().first == c.module) {  // the same call of that module goes on
    t->rows.back().second.output_shape = shape;
    t->rows.back().second.macs += macs;
    return;
  }
  LayerRow row;
  row.output_shape = shape;
  row.macs = macs;
  row.repeated = !t->seen.insert(c.module).second;
  t->rows.emplace_back(c.module, std::move(row));
}

}  // namespace

void ForwardTrace::own(const at::Tensor& tensor, std::size_t module) {
  by_impl[tensor.unsafeGetTensorImpl()] = module;
  if (tensor.has_storage() && tensor.storage().nbytes() > 0) by_data[tensor.storage().data()] = module;
}

TraceScope::TraceScope(ForwardTrace& trace) {
  t_trace = &trace;
  handle_ = at::addThreadLocalCallback(at::RecordFunctionCallback(on_start, on_end)
                                           .needsInputs(true)
                                           .needsOutputs(true)
                                           .scopes({at::RecordScope::FUNCTION}));
}

TraceScope::~TraceScope() {
  at::removeCallback(handle_);
  t_trace = nullptr;
}

}  // namespace plugtrain
