// Host -> device -> host round trips, byte for byte, for each dtype the backend claims: random
// bit patterns, so floats include NaNs (with payloads), infinities, -0.0 and subnormals. Both
// directions are copies as the host makes them: a plain one, and a non-blocking one from
// pinned memory when the loader settings ask for that.
#include <ATen/ATen.h>

#include "diagnose/conformance_checks.h"

namespace plugtrain {

namespace {

// Bit patterns every floating dtype must carry unchanged, as raw words of its width.
template <class Word>
std::vector<Word> special_patterns();

template <>
std::vector<std::uint16_t> special_patterns() {  // float16 and bfloat16 share the signs and NaN shapes
  return {0x0000, 0x8000, 0x7c00, 0xfc00, 0x7e00, 0x7c01, 0xfe01, 0x0001, 0x7f80, 0xff80, 0x7fc1, 0xffff};
}
template <>
std::vector<std::uint32_t> special_patterns() {
  return {0x00000000u, 0x80000000u, 0x7f800000u, 0xff800000u, 0x7fc00000u,
          0x7f800001u, 0xffc12345u, 0x00000001u, 0x807fffffu, 0x7f7fffffu};
}
template <>
std::vector<std::uint64_t> special_patterns() {
  return {0x0ULL,
          0x8000000000000000ULL,
          0x7ff0000000000000ULL,
          0xfff0000000000000ULL,
          0x7ff8000000000000ULL,
          0x7ff0000000000001ULL,
          0xfff8123456789abcULL,
          0x1ULL,
          0x800fffffffffffffULL};
}

template <class Word>
void write_patterns(at::Tensor& t) {
  const std::vector<Word> patterns = special_patterns<Word>();
  auto* words = static_cast<Word*>(t.data_ptr());
  for (std::size_t i = 0; i < patterns.size() && std::int64_t(i) < t.numel(); ++i) words[i] = patterns[i];
}

// `elements` of `dtype` with random bytes (bool: 0 or 1, its only valid bytes) on the CPU.
at::Tensor random_bits(at::ScalarType dtype, std::int64_t elements, at::Generator& gen) {
  const std::int64_t width = c10::elementSize(dtype);
  if (dtype == at::kBool) return at::randint(0, 2, {elements}, gen, at::TensorOptions().dtype(at::kByte)).to(at::kBool);
  at::Tensor bytes = at::randint(0, 256, {elements * width}, gen, at::TensorOptions().dtype(at::kByte));
  at::Tensor t = bytes.view(dtype);
  if (at::isFloatingType(dtype)) {
    if (width == 2) write_patterns<std::uint16_t>(t);
    if (width == 4) write_patterns<std::uint32_t>(t);
    if (width == 8) write_patterns<std::uint64_t>(t);
  }
  return t;
}

CheckResult round_trip(ConformanceTarget& t, at::ScalarType dtype, bool pinned_non_blocking) {
  at::Generator gen = seeded(0x5eed + int(dtype));
  Comparison c;
  // An odd length (no multiple of a vector width) and a 2-D view that is not contiguous.
  const at::Tensor host = random_bits(dtype, 4099, gen);
  if (pinned_non_blocking) {
    const at::Tensor pinned = host.pin_memory();
    const at::Tensor on_device = pinned.to(t.device, /*non_blocking=*/true, /*copy=*/true);
    at::Tensor back = at::empty_like(host).pin_memory();
    back.copy_(on_device, /*non_blocking=*/true);
    (void)on_device.sum().item<double>();  // waits for the device, then for the copy into `back`
    back = back.clone();
    c.exact("pinned, non-blocking", back, host);
  } else {
    const at::Tensor on_device = copy_to(host, t.device);
    if (on_device.device() != t.device)
      return fail("copied to " + t.device.str() + ", the tensor is on " + on_device.device().str());
    c.exact("contiguous", copy_to(on_device, c10::Device(c10::kCPU)), host);
    const at::Tensor strided = host.narrow(0, 0, 4096).view({64, 64}).t();
    c.exact("transposed", copy_to(copy_to(strided, t.device), c10::Device(c10::kCPU)), strided.contiguous());
  }
  return c.result(std::to_string(host.numel()) + " random elements (" +
                  (at::isFloatingType(dtype) ? "NaN payloads, infinities, -0.0, subnormals" : "every bit pattern") +
                  ") there and back" + (pinned_non_blocking ? " from pinned memory, non-blocking" : ""));
}

}  // namespace

std::vector<CheckResult> check_transfers(ConformanceTarget& t) {
  std::vector<CheckResult> rows;
  const std::vector<std::pair<at::ScalarType, const char*>> dtypes = {
      {at::kFloat, "float32"}, {at::kDouble, "float64"}, {at::kBFloat16, "bfloat16"}, {at::kHalf, "float16"},
      {at::kLong, "int64"},    {at::kInt, "int32"},      {at::kByte, "uint8"},        {at::kBool, "bool"}};
  for (const auto& [dtype, name] : dtypes) {
    if (dtype == at::kDouble && !t.capabilities.float64) {
      rows.push_back(run_check("transfer", name, [] { return skip("capabilities().float64 is false"); }));
      continue;
    }
    rows.push_back(run_check("transfer", name, [&, dtype = dtype] { return round_trip(t, dtype, false); }));
  }
  const LoaderConfig loader = t.backend->loader_config({t.device_index});
  const bool pinned = loader.pin_memory && loader.non_blocking && !t.device.is_cpu();
  rows.push_back(run_check("transfer", "float32 pinned", [&] {
    return pinned ? round_trip(t, at::kFloat, true)
                  : skip("the loader settings do not ask for pinned memory and non-blocking copies");
  }));
  return rows;
}

}  // namespace plugtrain
