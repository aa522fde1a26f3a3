// `plugtrain run --profile` ([train] profile): LibTorch's profiler (Kineto) over
// train.profile_steps steps after train.profile_warmup steps, written as a Chrome trace
// (<run folder>/profile/trace.json: Perfetto, chrome://tracing, TensorBoard's profiler) and
// summarised as the top operators by self time on the CPU and on the device, with the memory
// they allocated.
#pragma once

#include <filesystem>
#include <iosfwd>
#include <string>

#include "train/callback.h"

namespace plugtrain {

// A device kernel's name as the summary prints it: demangled, without its return type, template
// arguments, parameter list or LibTorch's own namespaces ("void at::native::(anonymous
// namespace)::fused_dropout_kernel_vec<float, ...>(...)" -> "fused_dropout_kernel_vec").
std::string short_kernel_name(const std::string& name);

class ProfilerCallback final : public Callback {
 public:
  // device_activity: the Kineto activity of the device (Capabilities::profiler_activity), or "".
  ProfilerCallback(std::filesystem::path folder, std::int64_t warmup, std::int64_t steps, std::string device_activity,
                   std::ostream& log);
  ~ProfilerCallback() override;
  void on_train_start(LoopState& state) override;
  void on_step_end(const LoopState& state, const at::Tensor& loss) override;
  void on_train_end(LoopState& state) override;

 private:
  void start();
  void stop();
  std::filesystem::path folder_;
  std::int64_t warmup_, steps_, seen_ = 0, profiled_ = 0;
  std::string device_activity_;
  std::ostream& log_;
  bool active_ = false, done_ = false;
};

}  // namespace plugtrain
