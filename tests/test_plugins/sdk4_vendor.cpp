// A vendor's plugin in one file, as SDK 4 allowed: a backend (the host CPU under the plugin's
// name), a model, a data set and a task. Built against the released SDK 4.0 headers
// (tests/sdk_headers/4.0 first on the include path: sdk_module in CMakeLists.txt), as an author's
// build really was; tests/plugins/sdk_rules_test.cpp checks that today's SDK 5 host refuses it in
// one line, before any of its C++ is touched.
#include <cmath>
#include <string>

#include <ATen/ATen.h>
#include <torch/nn/modules/linear.h>

#include "plugtrain/backend.h"
#include "plugtrain/dataset.h"
#include "plugtrain/model.h"
#include "plugtrain/task.h"
#if PLUGTRAIN_SDK_ABI_MINOR >= 2
#include "plugtrain/summary.h"
#endif

static_assert(PLUGTRAIN_SDK_ABI_MAJOR == 4 && PLUGTRAIN_SDK_ABI_MINOR == TEST_SDK_MINOR,
              "the released headers must come first on the include path");

namespace {

using namespace plugtrain;
const std::string kName = TEST_PLUGIN_NAME;  // "sdk40vendor", "sdk43vendor"

class VendorBackend final : public Backend {
 public:
  void capabilities(CapabilitiesSink& out) const override {
    Capabilities c;
    c.device_type = "cpu";  // trains for real, on the host's processor
    c.host_cpu = true;
    c.priority = -40;  // never chosen by "auto" over the bundled CPU backend
    report(out, c);
  }
  void probe(ProbeSink& out) override {
    out.result(ProbeCode::usable, "the host CPU, as plugin " + kName);
    out.device(0, "host processor", "x86-64");
  }
  void loader_config(const std::vector<int>&, LoaderSink& out) override {
    out.loader(0, false, false, 1, "the data set is in the host's memory already");
  }
  void plan_multi_device(Strategy, const std::vector<int>&, PlanSink& out) override {
    out.plan(Strategy::single, {0}, "none");
  }
  void memory(int, MemorySink& out) override {
    out.memory(std::nullopt, std::nullopt);
    out.note("not measured by this test plugin");
  }
};

// Flatten, then one linear layer to the outputs the task asks for.
class VendorLinear final : public TensorModel
#if PLUGTRAIN_SDK_ABI_MINOR >= 2
    ,
                           public SummaryExtension
#endif
{
 public:
  VendorLinear(std::int64_t in, std::int64_t out) { fc_ = register_module("fc", torch::nn::Linear(in, out)); }
  torch::Tensor forward(torch::Tensor x) override { return fc_->forward(x.flatten(1)); }
#if PLUGTRAIN_SDK_ABI_MINOR >= 2
  std::string summary() const override {
    return "one linear layer, " + std::to_string(fc_->weight.numel()) + " weights";
  }
  void* extension(const char* name, std::uint32_t version) override {
    return is_extension(name, version, kSummaryExtension, 1) ? static_cast<SummaryExtension*>(this) : nullptr;
  }
#endif

 private:
  torch::nn::Linear fc_{nullptr};
};

// Two blobs of `samples` points in `dim` dimensions (as 1x1xdim images): class 0 around -1,
// class 1 around +1, drawn from the experiment's seed.
DatasetRead blobs(const DatasetQuery& query, const Options& options) {
  const std::int64_t n = options.integer("samples"), dim = options.integer("dim");
  const at::Generator gen = at::detail::createCPUGenerator(query.seed());
  DatasetRead read;
  for (DatasetReadSplit* split : {&read.train, &read.test}) {
    const at::Tensor y = at::randint(2, {n}, gen, at::kLong);
    split->inputs = (at::randn({n, 1, 1, dim}, gen) * 0.5 + (y.to(at::kFloat) * 2 - 1).view({n, 1, 1, 1})).contiguous();
    split->targets = y;
  }
  read.num_classes = 2;
  read.class_names = {"low", "high"};
  read.source = "two blobs drawn by plugin " + kName;
  return read;
}

class VendorTask final : public TaskFunctions {
 public:
  explicit VendorTask(std::int64_t classes) : classes_(classes) {}
  std::int64_t model_outputs() const override { return classes_; }
  at::Tensor loss(const TaskOutputs& outputs, const at::Tensor& targets) const override {
    return at::cross_entropy_loss(outputs.at("output"), targets);
  }
  std::int64_t statistics_size(TaskPass) const override { return 1; }
  at::Tensor statistics(TaskPass, const TaskOutputs& outputs, const at::Tensor& targets) const override {
    return outputs.at("output").argmax(1).eq(targets).sum().to(at::kFloat).reshape({1});
  }
  std::vector<double> metric_values(TaskPass, const std::vector<double>& totals, double samples) const override {
    return {totals.at(0) / samples};
  }

 private:
  std::int64_t classes_;
};

void register_plugin(Registrar& host) {
  host.add_backend(std::make_unique<VendorBackend>());
  add_model(host, {kName + "_linear",
                   "flatten and one linear layer",
                   {},
                   [](const ModelInputs& in, const Options&) -> std::shared_ptr<Model> {
                     std::int64_t features = 1;
                     for (std::int64_t d : in.input_shape) features *= d;
                     return std::make_shared<VendorLinear>(features, in.num_classes);
                   },
                   {},
                   {DatasetTargets::class_index}});
  // A host that lacks the extension gives null: the plugin does without it.
  const auto* greeting = static_cast<const char*>(host.host_extension("plugtrain.test.greeting", 1));
  DatasetSpec data;
  data.name = kName + "_blobs";
  data.description = std::string("two blobs; the host's greeting: ") + (greeting ? greeting : "absent");
  data.options = {{"samples", OptionType::integer, std::int64_t{256}, "points per split"},
                  {"dim", OptionType::integer, std::int64_t{8}, "dimensions"}};
  data.read = blobs;
  add_dataset(host, data, {OptionRule("samples").at_least(16), OptionRule("dim").at_least(1).at_most(1024)});
  TaskSpec task;
  task.name = kName + "_task";
  task.description = "classes by cross-entropy, judged by accuracy";
  task.training_metrics = task.evaluation_metrics = {{"accuracy", MetricGoal::maximize, "share of samples right"}};
  task.factory = [](const TargetDescription& data, const Options&) {
    return std::make_unique<VendorTask>(data.classes());
  };
  add_task(host, task);
#if PLUGTRAIN_SDK_ABI_MINOR >= 2
  host.homepage("https://example.com/" + kName);
#endif
}

}  // namespace

PLUGTRAIN_PLUGIN(register_plugin,
                 PLUGTRAIN_KIND_BACKEND | PLUGTRAIN_KIND_MODELS | PLUGTRAIN_KIND_DATASETS | PLUGTRAIN_KIND_TASKS,
                 TEST_PLUGIN_NAME, "4.0.0", "a vendor's backend, model, data set and task in one file")
