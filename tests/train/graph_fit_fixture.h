// The fit-level fixture of the recorded-step tests (graph_step_test.cpp and
// graph_step_outside_test.cpp): a recorder that keeps the recorded work and runs it again stands
// in for CUDA graphs on any machine, and a RecordFunction log tells what ran outside that work.
#pragma once

#include <algorithm>
#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <ATen/record_function.h>
#include <torch/nn/modules/linear.h>
#include <torch/optim/adam.h>

#include "data/dataset.h"
#include "data/device_resident.h"
#include "data/from_experiment.h"
#include "readers/synthetic.h"
#include "train/graph_step.h"
#include "train/trainer.h"

namespace plugtrain {
namespace graph_step_test {

// True while the step's recorded work (or a warm-up of it) runs.
inline std::atomic<bool> g_in_recorded_work{false};
struct InRecordedWork {
  InRecordedWork() { g_in_recorded_work = true; }
  ~InRecordedWork() { g_in_recorded_work = false; }
};

// The operators the training thread calls outside the step's recorded work, in order, with
// kReplay where the recorder replayed (LibTorch's RecordFunction). Nested calls (a copy_ inside
// to()) are counted by calls() but left out of the order.
class OpsOutsideTheRecording {
 public:
  static constexpr const char* kReplay = "<replay>";
  OpsOutsideTheRecording() {
    log_.clear();
    depth_ = 0;
    active_ = true;
    handle_ = at::addGlobalCallback(at::RecordFunctionCallback(
        [](const at::RecordFunction& fn) -> std::unique_ptr<at::ObserverContext> {
          // The training thread's ops only: the loader's threads never compute the statistics.
          if (std::this_thread::get_id() != trainer_thread_ || g_in_recorded_work) return nullptr;
          log_.push_back({fn.name(), depth_++});
          return std::make_unique<Started>();
        },
        [](const at::RecordFunction&, at::ObserverContext* started) {
          if (started) --depth_;
        }));
  }
  ~OpsOutsideTheRecording() {
    at::removeCallback(handle_);
    active_ = false;
  }
  static void note_replay() {
    if (active_) log_.push_back({kReplay, 0});
  }
  int calls(const std::string& op) const {
    int n = 0;
    for (const Call& c : log_) n += c.name == op;
    return n;
  }
  // The top-level ops between each two consecutive replays.
  std::vector<std::vector<std::string>> between_replays() const {
    std::vector<std::vector<std::string>> segments;
    bool after_replay = false;
    std::vector<std::string> segment;
    for (const Call& c : log_) {
      if (c.name == kReplay) {
        if (after_replay) segments.push_back(segment);
        after_replay = true;
        segment.clear();
      } else if (c.depth == 0) {
        segment.push_back(c.name);
      }
    }
    return segments;
  }

 private:
  struct Call {
    std::string name;
    int depth;
  };
  struct Started : at::ObserverContext {};  // an op this log counted: its end closes a level
  at::CallbackHandle handle_;
  static inline std::vector<Call> log_;
  static inline int depth_ = 0;
  static inline bool active_ = false;
  static inline const std::thread::id trainer_thread_ = std::this_thread::get_id();  // fit() runs on the test's thread
};

// Keeps the recorded work and reruns it on replay; counts what it was asked to do.
struct Recorder : GraphCapture {
  struct Counts {
    int warm_ups = 0, captures = 0, replays = 0;
  };
  Recorder(Counts& counts, bool refuse) : counts_(counts), refuse_(refuse) {}
  void warm_up(const std::function<void()>& work) override {
    ++counts_.warm_ups;
    InRecordedWork inside;
    work();
  }
  void capture(const std::function<void()>& work) override {
    ++counts_.captures;
    if (refuse_) throw std::runtime_error("operation not permitted when stream is capturing");
    recorded_ = work;
  }
  void replay() override {
    ++counts_.replays;
    OpsOutsideTheRecording::note_replay();
    InRecordedWork inside;
    recorded_();
  }
  Counts& counts_;
  bool refuse_;
  std::function<void()> recorded_;
};

class Net : public TensorModel {
 public:
  Net()
      : fc1(register_module("fc1", torch::nn::Linear(16, 24))), fc2(register_module("fc2", torch::nn::Linear(24, 3))) {}
  torch::Tensor forward(torch::Tensor x) override { return fc2(at::relu(fc1(x.flatten(1)))); }
  torch::nn::Linear fc1, fc2;
};

class GraphFitTest : public ::testing::Test {
 protected:
  // 100 samples in batches of 16: six full batches and one of 4 per epoch.
  TrainSummary fit(
      bool graphs, const std::function<void(Experiment&)>& configure = [](Experiment&) {}, bool refuse = false,
      bool fall_back = true) {
    e_ = Experiment{};
    e_.train.epochs = 3;
    e_.data.batch_size = 16;
    e_.train.log_interval = 0;
    e_.experiment.seed = 5;
    e_.optim.name = OptimizerName::adam;
    e_.optim.impl = OptimizerImpl::fused;
    e_.optim.lr = 0.01;
    e_.schedule.name = ScheduleName::cosine;
    e_.train.grad_clip = 0.5;
    configure(e_);
    data_ = data::make_synthetic({1, 4, 4}, 3, 100, 40, 5);
    if (alter_data_) alter_data_(data_.train);
    at::manual_seed(5);
    TrainerParts parts = single_device_parts(e_, std::make_shared<Net>(), data_, {});
    if (on_device_)  // data.on_device, with the CPU standing in for the device
      parts.device.train_on_device = std::make_shared<data::DeviceResident>(
          data_.train, data::augment_options(parts.loop.augment), c10::Device(c10::kCPU));
    optimizer_ = parts.optimizer.get();
    counts_ = {};
    if (graphs) {
      parts.make_graph_capture = [this, refuse] { return std::make_unique<Recorder>(counts_, refuse); };
      parts.graph_fallback = fall_back;
    }
    trainer_ = std::make_unique<Trainer>(std::move(parts));
    return trainer_->fit();
  }
  std::int64_t first_parameter_step() const {
    const auto& state = optimizer_->state();
    return static_cast<const torch::optim::AdamParamState&>(*state.begin()->second).step();
  }
  static void expect_same_curves(const TrainSummary& a, const TrainSummary& b) {
    ASSERT_EQ(a.epochs.size(), b.epochs.size());
    for (std::size_t i = 0; i < a.epochs.size(); ++i) {
      EXPECT_NEAR(a.epochs[i].train_loss, b.epochs[i].train_loss, 1e-6) << "epoch " << i + 1;
      EXPECT_NEAR(*a.epochs[i].test_loss, *b.epochs[i].test_loss, 1e-6) << "epoch " << i + 1;
    }
  }

  Experiment e_;
  bool on_device_ = false;
  std::function<void(data::Dataset&)> alter_data_;
  data::DatasetPair data_;
  torch::optim::Optimizer* optimizer_ = nullptr;
  Recorder::Counts counts_;
  std::unique_ptr<Trainer> trainer_;
};

}  // namespace graph_step_test
}  // namespace plugtrain
