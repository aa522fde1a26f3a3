// A small host built against the test-only SDK 4.3 headers (tests/sdk_headers/4.3), which append
// Registrar::homepage and add the extension "plugtrain.summary". It loads each plugin file named
// on its command line, checks the handshake as plugtrain's host does (major 4, minor at most
// 1), registers the plugin, reads its data set, builds its model for that data, and takes one loss
// of its task; one JSON line per plugin says what it saw. tests/plugins/sdk_rules_test.cpp runs it on the
// 4.0 and 4.3 builds of tests/test_plugins/sdk4_vendor.cpp: the growth rule of docs/plugins.md.
#include <iostream>
#include <map>

#include <ATen/ATen.h>
#include <boost/dll/shared_library.hpp>
#include <nlohmann/json.hpp>

#include "plugtrain/backend.h"
#include "plugtrain/dataset.h"
#include "plugtrain/model.h"
#include "plugtrain/summary.h"
#include "plugtrain/task.h"

namespace {

using namespace plugtrain;
using nlohmann::json;

class IgnoredOptions final : public OptionsBuilder {
 public:
  void option(const std::string& name, OptionType, const OptionValue& default_value, const std::string&) override {
    defaults[name] = default_value;
  }
  void lower_bound(const std::string&, double, bool) override {}
  void upper_bound(const std::string&, double, bool) override {}
  void choices(const std::string&, const std::vector<std::string>&) override {}
  void length(const std::string&, std::size_t, std::size_t) override {}
  std::map<std::string, OptionValue> defaults;
};

struct Staged : ModelBuilder, DatasetBuilder, TaskBuilder {
  // One object for the three builders: this host keeps the last of each.
  void description(const std::string& line) override { descriptions.push_back(line); }
  OptionsBuilder& options() override { return opts; }
  void serves(const std::vector<DatasetTargets>&) override {}
  void factory(BatchModelFactory make) override { model = std::move(make); }
  void targets(DatasetTargets) override {}
  void reader(DatasetReader read) override { dataset = std::move(read); }
  void path_check(DatasetPathCheck) override {}
  void fields(const std::vector<std::string>&) override {}
  void validation_split(const std::string&) override {}
  void metric(TaskPass, const std::string&, MetricGoal, const std::string&) override {}
  void loss_waits_for_host(const std::string&) override {}
  void factory(TaskFactory make) override { task = std::move(make); }
  std::vector<std::string> descriptions;
  IgnoredOptions opts;
  BatchModelFactory model;
  DatasetReader dataset;
  TaskFactory task;
};

class Host42 final : public Registrar {
 public:
  void add_backend(std::unique_ptr<Backend> b) override { backend = std::move(b); }
  ModelBuilder& add_model(const std::string&) override { return staged; }
  DatasetBuilder& add_dataset(const std::string&) override { return staged; }
  TaskBuilder& add_task(const std::string&) override { return staged; }
  void* host_extension(const char* name, std::uint32_t version) override {
    static const char greeting[] = "hello from the 4.3 host";
    return is_extension(name, version, "plugtrain.test.greeting", 1) ? const_cast<char*>(greeting) : nullptr;
  }
  LoggerBuilder& add_logger(const std::string&) override {  // 4.1's: the vendor plugin registers none
    throw std::logic_error("this test host takes no loggers");
  }
  void homepage(const std::string& url) override { page = url; }  // 4.3's appended call
  std::unique_ptr<Backend> backend;
  Staged staged;
  std::string page;
};

struct Split : DatasetSink {
  void split(const std::string& name, const at::Tensor& x, const at::Tensor& y) override {
    if (name == "train") inputs = x, labels = y;
  }
  void decoded_split(const std::string&, std::int64_t, const std::vector<std::int64_t>&, SampleDecoder,
                     const at::Tensor&) override {}
  void field(const std::string&, const std::string&, const at::Tensor&) override {}
  void targets(DatasetTargets) override {}
  void classes(std::int64_t count, const std::vector<std::string>&) override { classes_ = count; }
  void source(const std::string&) override {}
  void test_split_name(const std::string&) override {}
  void note(const std::string&) override {}
  at::Tensor inputs, labels;
  std::int64_t classes_ = 0;
};

struct Query : DatasetQuery {
  std::string path() const override { return ""; }
  std::uint64_t seed() const override { return 7; }
  std::int64_t image_size() const override { return 0; }
  int cache() const override { return -1; }
  int decode_threads() const override { return 1; }
  bool skip_bad() const override { return false; }
  DatasetTargets task_targets() const override { return DatasetTargets::class_index; }
};

struct Batch : BatchDescription {
  std::vector<std::int64_t> input_shape;
  std::vector<std::string> fields() const override { return {"input"}; }
  bool has(const std::string& f) const override { return f == "input"; }
  c10::ScalarType dtype(const std::string&) const override { return c10::ScalarType::Float; }
  std::vector<std::int64_t> shape(const std::string&) const override { return input_shape; }
  std::string lengths_field(const std::string&) const override { return ""; }
};

struct Target : TargetDescription {
  std::int64_t n = 0, outputs = 0;
  DatasetTargets kind() const override { return DatasetTargets::class_index; }
  std::int64_t classes() const override { return n; }
  std::vector<std::int64_t> shape() const override { return {}; }
  std::vector<std::string> class_names() const override { return {}; }
  std::int64_t model_outputs() const override { return outputs; }
};

json load(const std::string& file) {
  json out{{"file", file}};
  boost::dll::shared_library library(file, boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local);
  const auto* info = library.get<const plugtrain_plugin_info*()>(PLUGTRAIN_INFO_SYMBOL)();
  out["name"] = info->name;
  out["sdk"] = std::to_string(info->sdk_abi_major) + "." + std::to_string(info->sdk_abi_minor);
  if (info->sdk_abi_major != PLUGTRAIN_SDK_ABI_MAJOR || info->sdk_abi_minor > PLUGTRAIN_SDK_ABI_MINOR)
    return out["refused"] = true, out;
  Host42 host;
  library.get_alias<void(Registrar&)>("plugtrain_register")(host);
  out["homepage"] = host.page;
  out["descriptions"] = host.staged.descriptions;
  Split data;
  host.staged.dataset(Query(), Options(host.staged.opts.defaults), data);
  Batch batch;
  batch.input_shape = data.inputs.sizes().slice(1).vec();
  Target target;
  target.n = data.classes_;
  const std::unique_ptr<TaskFunctions> task = host.staged.task(target, Options());
  target.outputs = task->model_outputs();
  const std::shared_ptr<Model> model = host.staged.model(batch, target, Options());
  const TensorMap outputs = model->forward_batch({{"input", data.inputs}});
  out["loss"] = task->loss(outputs, data.labels).item<double>();
  // What this host asks beyond 4.0: absent means no summary (the documented default).
  const auto* summary = static_cast<SummaryExtension*>(model->extension(kSummaryExtension, 1));
  out["summary"] = summary ? json(summary->summary()) : json(nullptr);
  out["backend_probe_runs"] = bool(host.backend);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    try {
      std::cout << load(argv[i]).dump() << std::endl;
    } catch (const std::exception& e) { std::cout << json{{"file", argv[i]}, {"error", e.what()}}.dump() << std::endl; }
  }
  return 0;
}
