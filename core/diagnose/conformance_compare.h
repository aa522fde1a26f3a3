// How check-backend judges a result against the CPU's: tensors within a tolerance or
// byte for byte, gathered over every tensor a check compares so that its one-line detail names
// the worst. Also the pieces every check shares: the target device, timing, seeded inputs.
#pragma once

#include <ATen/core/Generator.h>
#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "diagnose/conformance.h"
#include "plugins/plugin_host.h"

namespace plugtrain {

// The backend under test and its first probed device.
struct ConformanceTarget {
  PluginHost* host = nullptr;
  BackendHandle* backend = nullptr;
  SearchOptions search;  // to load a second host, for a fresh probe
  Capabilities capabilities;
  ProbeResult probe;
  double probe_seconds = 0;  // how long the first probe took
  int device_index = 0;
  c10::Device device{c10::kCPU};
};

// |got - cpu| <= atol + rtol * max|cpu| at every element (a scale for the whole tensor, so a
// value near zero in a large tensor is not judged on its own digits).
struct Tolerance {
  double rtol = 1e-3;
  double atol = 1e-5;
};

// Every tensor one check compares with its CPU counterpart; result() says PASS with the worst
// of them, or FAIL with the first that was out.
class Comparison {
 public:
  explicit Comparison(Tolerance tolerance = {}) : tolerance_(tolerance) {}
  // `got` may be on any device; `cpu` is the reference. Shapes and dtypes must agree; NaN must
  // be where the CPU has NaN; infinities must match exactly.
  void close(const std::string& what, const at::Tensor& got, const at::Tensor& cpu);
  void close(const std::string& what, const at::Tensor& got, const at::Tensor& cpu, Tolerance tolerance);
  // Byte for byte (and the same dtype and shape).
  void exact(const std::string& what, const at::Tensor& got, const at::Tensor& expected);
  // A failure found by the check itself.
  void fail(const std::string& why);

  bool ok() const { return !failure_; }
  int count() const { return count_; }
  // PASS: "<summary>; worst: <what> at 3.1e-07 (allowed 2.0e-05)" or "...; all bit-exact".
  CheckResult result(const std::string& summary) const;

 private:
  Tolerance tolerance_;
  std::optional<std::string> failure_;
  int count_ = 0;
  double worst_ratio_ = -1;  // error / allowed, of the worst tensor so far
  std::string worst_;        // its description
};

// Runs one check: times `body`, and an exception out of it (a plugin's, LibTorch's) is a FAIL
// with its first line.
CheckResult run_check(const std::string& group, const std::string& name, const std::function<CheckResult()>& body);

CheckResult pass(std::string detail);
CheckResult fail(std::string detail);
CheckResult skip(std::string detail);

// A CPU generator of its own, so each check's inputs are the same whatever ran before it.
at::Generator seeded(std::uint64_t seed);

// `t` copied to `device` (always a copy, also when `device` is the CPU).
at::Tensor copy_to(const at::Tensor& t, c10::Device device);

// "1.2e-07"
std::string scientific(double value);

}  // namespace plugtrain
