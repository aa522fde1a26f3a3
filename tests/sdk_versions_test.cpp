// Plugins built against the released SDK 3.x headers themselves (tests/sdk_headers/, copied
// unchanged from the commits that released them), loaded by today's host: every value they
// give crosses exactly, the fields their SDK lacked arrive as defaults, and the calls their SDK
// lacked are not made. Before the host kept frozen layouts (core/plugins/sdk_compat/), a 3.0
// plugin's capabilities() left the host reading two std::strings nobody had constructed.
#include <dlfcn.h>

#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "plugins/plugin_error.h"
#include "plugins/plugin_host.h"
#include "plugins/sdk_compat/frozen_v3.h"
#include "support/sdk_versions.h"

namespace plugtrain {
namespace sdk_versions_test {

namespace fs = std::filesystem;
namespace v3 = sdk_compat::v3;
using testing::OldSdkPlugin;

// ---- the host's frozen copies against what the released headers compile to ----

#define FROZEN_LAYOUT(NAME, TYPE) \
  (std::string(NAME " ") + std::to_string(sizeof(TYPE)) + " " + std::to_string(alignof(TYPE)) + "\n")

template <class Capabilities>
std::string frozen_backend_layout() {
  return FROZEN_LAYOUT("Capabilities", Capabilities) + FROZEN_LAYOUT("DeviceInfo", v3::DeviceInfo) +
         FROZEN_LAYOUT("ProbeResult", v3::ProbeResult) + FROZEN_LAYOUT("LoaderConfig", v3::LoaderConfig) +
         FROZEN_LAYOUT("MultiDeviceRequest", v3::MultiDeviceRequest) +
         FROZEN_LAYOUT("MultiDevicePlan", v3::MultiDevicePlan) + FROZEN_LAYOUT("MemoryInfo", v3::MemoryInfo);
}

std::string frozen_model_layout(int minor) {
  return FROZEN_LAYOUT("OptionSpec", v3::OptionSpec) + FROZEN_LAYOUT("Options", v3::Options) +
         FROZEN_LAYOUT("ModelInputs", v3::ModelInputs) + FROZEN_LAYOUT("ModelSpec", v3::ModelSpec) +
         (minor >= 2 ? FROZEN_LAYOUT("OptionRule", v3::OptionRule) : std::string());
}

// What a module built against released headers says its types are (tests/plugins/sdk_layout.h).
std::string released_layout(const fs::path& module) {
  void* library = ::dlopen(module.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!library) return std::string("cannot load: ") + ::dlerror();
  auto layout = reinterpret_cast<const char* (*)()>(::dlsym(library, "plugtrain_test_sdk_layout"));
  return layout ? layout() : "no plugtrain_test_sdk_layout";  // left loaded, as the host does
}

TEST(SdkVersions, FrozenLayoutsAreThoseOfTheReleasedHeaders) {
  const fs::path tp = PLUGTRAIN_TEST_PLUGIN_DIR;
  EXPECT_EQ(released_layout(tp / "sdk30/test_sdk30_backend.so"), frozen_backend_layout<v3::Capabilities_3_0>());
  EXPECT_EQ(released_layout(tp / "sdk30ec94635/test_sdk30ec94635_backend.so"),
            frozen_backend_layout<v3::Capabilities_3_0_ec94635>());
  EXPECT_EQ(released_layout(tp / "sdk30ffd2fcf/test_sdk30ffd2fcf_backend.so"),
            frozen_backend_layout<v3::Capabilities_3_1>());
  EXPECT_EQ(released_layout(tp / "sdk30/test_sdk30_models.so"),
            frozen_backend_layout<v3::Capabilities_3_0>() + frozen_model_layout(0));
  EXPECT_EQ(released_layout(tp / "sdk_layouts/test_sdk31_layout.so"),
            frozen_backend_layout<v3::Capabilities_3_1>() + frozen_model_layout(1));
  EXPECT_EQ(released_layout(tp / "sdk32/test_sdk32_backend.so"), frozen_backend_layout<v3::Capabilities_3_1>());
  EXPECT_EQ(released_layout(tp / "sdk32/test_sdk32_models.so"),
            frozen_backend_layout<v3::Capabilities_3_1>() + frozen_model_layout(2));
  EXPECT_EQ(released_layout(tp / "sdk_layouts/test_sdk33_layout.so"),
            frozen_backend_layout<v3::Capabilities_3_1>() + frozen_model_layout(3));
  // The only struct that changed: the 3.0 one is really smaller than today's.
  EXPECT_LT(sizeof(v3::Capabilities_3_0), sizeof(Capabilities));
}

// ---- through the host, in process ----

PluginHost host_with(const std::vector<OldSdkPlugin>& plugins) {
  SearchOptions options;
  for (const auto& p : plugins) options.cli_paths.push_back(p.folder());
  options.use_environment = false;
  return PluginHost(options);
}

void expect_backend_answers_exactly(PluginHost& host, const OldSdkPlugin& p) {
  SCOPED_TRACE("plugin " + p.backend());
  const PluginRecord* record = nullptr;
  for (const auto& r : host.plugins())
    if (r.has_handshake && r.handshake.name == p.backend()) record = &r;
  ASSERT_NE(record, nullptr);
  ASSERT_EQ(record->status, PluginStatus::loaded) << record->reason;
  EXPECT_EQ(record->handshake.abi_minor, std::uint32_t(p.minor));
  BackendHandle* b = host.backend(p.backend());
  ASSERT_NE(b, nullptr);

  const Capabilities& c = b->capabilities();
  EXPECT_EQ(c.device_type, "cpu");
  EXPECT_TRUE(c.host_cpu);
  EXPECT_FALSE(c.float64);
  EXPECT_EQ(c.priority, -int(p.number));
  EXPECT_EQ(c.strategies, (std::vector<Strategy>{Strategy::single, Strategy::dp}));
  EXPECT_EQ(c.collective, p.collective());
  EXPECT_EQ(c.visible_devices_variable, p.visible_devices_variable());  // "" where its SDK had no such field
  EXPECT_EQ(c.profiler_activity, p.profiler_activity());

  const ProbeResult& probe = b->probe();
  EXPECT_EQ(probe.code, ProbeCode::usable) << probe.message;
  EXPECT_EQ(probe.message, "usable: the sdk " + p.tag + " plugin");
  EXPECT_EQ(probe.avoid_in_auto, "the sdk " + p.tag + " plugin is for tests only");
  ASSERT_EQ(probe.devices.size(), 1u);
  const DeviceInfo& d = probe.devices[0];
  EXPECT_EQ(d.index, 0);
  EXPECT_EQ(d.name, p.device_name());
  EXPECT_EQ(d.total_memory_bytes, 3000000000 + p.number);
  EXPECT_EQ(d.free_memory_bytes, 1000000000 + p.number);
  EXPECT_EQ(d.capability, p.capability());
  EXPECT_EQ(d.details, p.details());

  const LoaderConfig l = b->loader_config({0});
  EXPECT_EQ(l.workers, 1);
  EXPECT_FALSE(l.pin_memory);
  EXPECT_TRUE(l.non_blocking);
  EXPECT_EQ(l.prefetch_depth, 3);
  EXPECT_EQ(l.why, "loader of the sdk " + p.tag + " plugin");

  const MultiDevicePlan plan = b->plan_multi_device({{0}, Strategy::single});
  EXPECT_EQ(plan.strategy, Strategy::single);
  EXPECT_EQ(plan.devices, std::vector<int>{0});
  EXPECT_EQ(plan.collective, "none");
  EXPECT_EQ(plan.warnings, std::vector<std::string>{p.plan_warning()});

  const MemoryInfo m = b->memory(0);
  EXPECT_EQ(m.total_bytes, 7000000000 + p.number);
  EXPECT_EQ(m.free_bytes, 5000000000 + p.number);
  EXPECT_EQ(m.process_used_bytes, 100000000 + p.number);
  EXPECT_EQ(m.process_peak_bytes, 200000000 + p.number);
  EXPECT_EQ(m.reserved_bytes, 300000000 + p.number);
  EXPECT_EQ(m.oom_events, p.number);
  EXPECT_EQ(m.note, p.memory_note());
  EXPECT_THROW(b->memory(5), PluginError);  // a throw still crosses as an error naming the plugin

  // Calls its SDK lacked are not made: their host-side defaults.
  b->release_cached_memory(0);
  EXPECT_EQ(b->reset_peak_memory(0), p.minor >= 1);
  EXPECT_FALSE(b->make_graph_capture(0).ok());
  EXPECT_TRUE(b->cpu_fallback_counts().empty());
  EXPECT_EQ(b->autocast_precisions(), (std::vector<std::string>{"bf16", "fp16"}));
}

TEST(SdkVersions, BackendsOfEveryReleasedShapeAnswerExactly) {
  PluginHost host = host_with(testing::old_sdk_backends());
  for (const OldSdkPlugin& p : testing::old_sdk_backends()) expect_backend_answers_exactly(host, p);
}

TEST(SdkVersions, ModelsPluginsRegisterTheirSpecsAndRules) {
  PluginHost host = host_with({testing::sdk30(), testing::sdk32()});
  for (const OldSdkPlugin& p : {testing::sdk30(), testing::sdk32()}) {
    SCOPED_TRACE("plugin " + p.models());
    const RegisteredModel* model = host.models().find(p.model());
    ASSERT_NE(model, nullptr);
    EXPECT_EQ(model->plugin, p.models());
    EXPECT_EQ(model->spec.description, "an MLP registered by a plugin built with the sdk " + p.tag + " headers");
    ASSERT_EQ(model->spec.options.size(), 4u);
    const std::string sdk = " (sdk " + p.tag + ")";
    const auto& o = model->spec.options;
    EXPECT_EQ(o[0].name, "hidden");
    EXPECT_EQ(o[0].type, OptionType::integer);
    EXPECT_EQ(o[0].default_value, OptionValue(std::int64_t(p.number)));
    EXPECT_EQ(o[0].doc, "hidden features" + sdk);
    EXPECT_EQ(o[1].default_value, OptionValue(1.25));
    EXPECT_EQ(o[2].type, OptionType::string);
    EXPECT_EQ(o[2].default_value, OptionValue(std::string("relu")));
    EXPECT_EQ(o[3].type, OptionType::integer_list);
    EXPECT_EQ(o[3].default_value, OptionValue(std::vector<std::int64_t>{3, 0, std::int64_t(p.number)}));
    EXPECT_EQ(o[3].doc, "not used" + sdk);

    if (p.minor < 2) {
      EXPECT_TRUE(model->rules.empty());  // registered with 3.0's add(spec)
    } else {
      ASSERT_EQ(model->rules.size(), 4u);
      EXPECT_EQ(model->rules[0].option, "hidden");
      EXPECT_EQ(model->rules[0].min, 1.0);
      EXPECT_EQ(model->rules[0].max, 4096.0);
      EXPECT_FALSE(model->rules[0].min_exclusive);
      EXPECT_TRUE(model->rules[1].min_exclusive);
      EXPECT_EQ(model->rules[2].choices, (std::vector<std::string>{"relu", "tanh"}));
      EXPECT_EQ(model->rules[3].min_length, std::size_t(1));
      EXPECT_EQ(model->rules[3].max_length, std::size_t(5));
    }

    // The plugin's factory, given the host's Options, builds a model that runs.
    std::map<std::string, OptionValue> values;
    for (const auto& spec : o) values[spec.name] = spec.default_value;
    values["activation"] = std::string("tanh");
    std::shared_ptr<Model> net = model->spec.factory(ModelInputs{{1, 4, 4}, 3}, Options(values));
    ASSERT_NE(net, nullptr);
    EXPECT_EQ(net->forward(torch::zeros({2, 1, 4, 4})).sizes(), (std::vector<std::int64_t>{2, 3}));
  }
}

}  // namespace sdk_versions_test
}  // namespace plugtrain
