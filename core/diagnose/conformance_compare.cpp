#include "diagnose/conformance_compare.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include <chrono>
#include <cstdio>
#include <cstring>

#include "util/clock.h"
#include "util/format.h"
#include "util/text.h"

namespace plugtrain {

namespace {

std::string dtype_text(const at::Tensor& t) { return std::string(c10::toString(t.scalar_type())); }

// Shapes and dtypes first: nothing else can be compared without them.
std::optional<std::string> layout_differs(const std::string& what, const at::Tensor& got, const at::Tensor& cpu) {
  if (!got.defined() || !cpu.defined())
    return what + ": " + (got.defined() ? "the CPU gave none" : "the device gave none");
  if (got.sizes() != cpu.sizes())
    return what + ": shape " + shape_text(got.sizes()) + ", the CPU's is " + shape_text(cpu.sizes());
  if (got.scalar_type() != cpu.scalar_type())
    return what + ": dtype " + dtype_text(got) + ", the CPU's is " + dtype_text(cpu);
  return std::nullopt;
}

}  // namespace

std::string scientific(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1e", value);
  return text;
}

void Comparison::close(const std::string& what, const at::Tensor& got, const at::Tensor& cpu) {
  close(what, got, cpu, tolerance_);
}

void Comparison::close(const std::string& what, const at::Tensor& got, const at::Tensor& cpu, Tolerance tolerance) {
  if (failure_) return;
  ++count_;
  if (auto differs = layout_differs(what, got, cpu)) return fail(*differs);
  if (cpu.numel() == 0) return;
  const at::Tensor got_on_cpu = got.detach().to(at::kCPU);
  if (got_on_cpu.equal(cpu.detach())) {  // the common case on a faithful device, and the quick one
    if (worst_ratio_ < 0) {
      worst_ratio_ = 0;
      worst_ = "identical to the CPU's";
    }
    return;
  }
  const at::Tensor g = got_on_cpu.to(at::kDouble);
  const at::Tensor c = cpu.detach().to(at::kCPU).to(at::kDouble);
  const at::Tensor nan_g = g.isnan(), nan_c = c.isnan();
  if (!nan_g.equal(nan_c))
    return fail(what + ": " + std::to_string(nan_g.ne(nan_c).sum().item<std::int64_t>()) +
                " elements are NaN on one side only");
  const at::Tensor finite_c = c.isfinite();
  const at::Tensor infinite = c.isinf() | g.isinf();
  if (infinite.any().item<bool>() && !g.masked_select(infinite).equal(c.masked_select(infinite)))
    return fail(what + ": an infinity differs from the CPU's");
  const at::Tensor both_finite = finite_c & g.isfinite();
  if (!both_finite.any().item<bool>()) return;
  const double scale = c.masked_select(both_finite).abs().max().item<double>();
  const double allowed = tolerance.atol + tolerance.rtol * scale;
  const at::Tensor error = (g - c).abs().masked_fill(both_finite.logical_not(), 0.0);
  const double worst = error.max().item<double>();
  if (!(worst <= allowed)) {
    const std::int64_t at = error.flatten().argmax().item<std::int64_t>();
    return fail(what + ": max error " + scientific(worst) + " where " + scientific(allowed) + " is allowed (element " +
                std::to_string(at) + ": " + std::to_string(g.flatten()[at].item<double>()) + ", the CPU " +
                std::to_string(c.flatten()[at].item<double>()) + ")");
  }
  const double ratio = allowed > 0 ? worst / allowed : 0;
  if (ratio > worst_ratio_) {
    worst_ratio_ = ratio;
    worst_ = what + " " + scientific(worst) + " (allowed " + scientific(allowed) + ")";
  }
}

void Comparison::exact(const std::string& what, const at::Tensor& got, const at::Tensor& expected) {
  if (failure_) return;
  ++count_;
  if (auto differs = layout_differs(what, got, expected)) return fail(*differs);
  const at::Tensor g = got.detach().to(at::kCPU).contiguous();
  const at::Tensor e = expected.detach().to(at::kCPU).contiguous();
  const auto* a = static_cast<const unsigned char*>(g.const_data_ptr());
  const auto* b = static_cast<const unsigned char*>(e.const_data_ptr());
  const std::size_t bytes = g.nbytes();
  if (bytes == 0 || std::memcmp(a, b, bytes) == 0) {
    if (worst_ratio_ < 0) {
      worst_ratio_ = 0;
      worst_ = "bit-exact";
    }
    return;
  }
  std::size_t first = 0;
  while (first < bytes && a[first] == b[first]) ++first;
  std::int64_t differing = 0;
  for (std::size_t i = 0; i < bytes; ++i) differing += a[i] != b[i];
  fail(what + ": " + std::to_string(differing) + " of " + std::to_string(bytes) +
       " bytes differ (the first in element " + std::to_string(first / g.element_size()) + ")");
}

void Comparison::fail(const std::string& why) {
  if (!failure_) failure_ = why;
}

CheckResult Comparison::result(const std::string& summary) const {
  if (failure_) return plugtrain::fail(*failure_);
  if (worst_ratio_ <= 0) return pass(summary + (count_ > 0 ? "; " + worst_ : ""));
  return pass(summary + "; worst: " + worst_);
}

CheckResult run_check(const std::string& group, const std::string& name, const std::function<CheckResult()>& body) {
  const auto start = std::chrono::steady_clock::now();
  CheckResult r;
  try {
    r = body();
  } catch (const std::exception& e) {
    r = fail(shortened(first_line(e.what()), 300));
  }
  r.group = group;
  r.name = name;
  r.seconds = seconds_since(start);
  return r;
}

CheckResult pass(std::string detail) { return {"", "", CheckStatus::pass, std::move(detail), 0}; }
CheckResult fail(std::string detail) { return {"", "", CheckStatus::fail, std::move(detail), 0}; }
CheckResult skip(std::string detail) { return {"", "", CheckStatus::skip, std::move(detail), 0}; }

at::Generator seeded(std::uint64_t seed) { return at::make_generator<at::CPUGeneratorImpl>(seed); }

at::Tensor copy_to(const at::Tensor& t, c10::Device device) {
  return t.to(device, /*non_blocking=*/false, /*copy=*/true);
}

}  // namespace plugtrain
