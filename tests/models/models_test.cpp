// The bundled models plugin, loaded through the real plugin host: every architecture builds
// from its schema defaults, gives (N, classes) logits, has exactly the parameters its
// architecture implies, refuses bad options with one clear line, and actually learns.
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>
#include <torch/nn/functional/loss.h>
#include <torch/optim/sgd.h>

#include "plugins/plugin_host.h"
#include "support/bundled_models.h"

namespace plugtrain {
namespace models_test {

using namespace plugtrain::testing;  // support/bundled_models.h

const ModelInputs kMnist{{1, 28, 28}, 10};

std::vector<std::string> parameter_names(Model& m) {
  std::vector<std::string> names;
  for (const auto& p : m.named_parameters()) names.push_back(p.key());
  return names;
}

const char* const kModels[] = {"mlp", "convnet", "lenet5"};

TEST(ModelsPlugin, RegistersEveryArchitectureWithSchemaDefaultsOfTheDeclaredType) {
  for (const char* name : kModels) {
    const RegisteredModel* m = bundled_plugins().models().find(name);
    ASSERT_NE(m, nullptr) << name;
    EXPECT_EQ(m->plugin, "models");
    EXPECT_FALSE(m->spec.description.empty()) << name;
    EXPECT_TRUE(m->spec.batch_factory) << name;
    for (const auto& o : m->spec.options) {
      // variant index follows OptionType's order
      EXPECT_EQ(o.default_value.index(), static_cast<std::size_t>(o.type)) << name << "." << o.name;
      EXPECT_FALSE(o.doc.empty()) << name << "." << o.name;
    }
  }
  EXPECT_TRUE(bundled_plugins().models().shadowed().empty());
}

TEST(ModelsPlugin, DefaultsGiveLogitsOfShapeBatchByClasses) {
  torch::manual_seed(0);
  const torch::Tensor batch = torch::randn({4, 1, 28, 28});
  for (const char* name : kModels) {
    auto model = build_model(name, kMnist);
    model->eval();
    EXPECT_EQ(forward_input(*model, batch).sizes(), (std::vector<std::int64_t>{4, 10})) << name;
  }
}

TEST(ModelsPlugin, MlpParametersMatchTheArchitecture) {
  auto model = build_model("mlp", kMnist);
  EXPECT_EQ(parameter_count(*model), 784 * 256 + 256 + 256 * 128 + 128 + 128 * 10 + 10);  // 235146
  EXPECT_EQ(parameter_names(*model),
            (std::vector<std::string>{"fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias", "fc3.weight", "fc3.bias"}));
  auto linear = build_model("mlp", kMnist, {{"hidden", std::vector<std::int64_t>{}}});
  EXPECT_EQ(parameter_count(*linear), 784 * 10 + 10);
}

TEST(ModelsPlugin, ConvnetParametersMatchTheTensorFlowTutorialCnn) {
  auto model = build_model("convnet", kMnist);
  const std::int64_t conv1 = 1 * 32 * 5 * 5 + 32;
  const std::int64_t conv2 = 32 * 64 * 5 * 5 + 64;
  const std::int64_t fc1 = 64 * 7 * 7 * 1024 + 1024;
  const std::int64_t fc2 = 1024 * 10 + 10;
  EXPECT_EQ(parameter_count(*model), conv1 + conv2 + fc1 + fc2);  // 3274634
  EXPECT_EQ(parameter_names(*model),
            (std::vector<std::string>{"conv1.weight", "conv1.bias", "conv2.weight", "conv2.bias", "fc1.weight",
                                      "fc1.bias", "fc2.weight", "fc2.bias"}));
  // Other input shapes: flattened size follows (3, 32, 32) -> 64 * 8 * 8.
  auto rgb = build_model("convnet", {{3, 32, 32}, 5});
  EXPECT_EQ(parameter_count(*rgb), (3 * 32 * 25 + 32) + conv2 + (64 * 8 * 8 * 1024 + 1024) + (1024 * 5 + 5));
  rgb->eval();
  EXPECT_EQ(forward_input(*rgb, torch::zeros({2, 3, 32, 32})).sizes(), (std::vector<std::int64_t>{2, 5}));
}

TEST(ModelsPlugin, Lenet5ParametersMatchTheArchitectureFor28And32Inputs) {
  auto model = build_model("lenet5", kMnist);
  const std::int64_t convs = (1 * 6 * 25 + 6) + (6 * 16 * 25 + 16);
  const std::int64_t head = (120 * 84 + 84) + (84 * 10 + 10);
  EXPECT_EQ(parameter_count(*model), convs + (16 * 5 * 5 * 120 + 120) + head);  // 61706
  EXPECT_EQ(parameter_names(*model),
            (std::vector<std::string>{"conv1.weight", "conv1.bias", "conv2.weight", "conv2.bias", "fc1.weight",
                                      "fc1.bias", "fc2.weight", "fc2.bias", "fc3.weight", "fc3.bias"}));
  // 32x32: 32 -> pool 16 -> conv 12 -> pool 6.
  auto big = build_model("lenet5", {{1, 32, 32}, 10}, {{"activation", std::string("tanh")}});
  EXPECT_EQ(parameter_count(*big), convs + (16 * 6 * 6 * 120 + 120) + head);
  EXPECT_EQ(forward_input(*big, torch::zeros({3, 1, 32, 32})).sizes(), (std::vector<std::int64_t>{3, 10}));
  // Smallest accepted input.
  auto small = build_model("lenet5", {{1, 12, 12}, 10});
  EXPECT_EQ(forward_input(*small, torch::zeros({1, 1, 12, 12})).sizes(), (std::vector<std::int64_t>{1, 10}));
}

TEST(ModelsPlugin, BadOptionsAreRefusedWithOneClearLine) {
  EXPECT_EQ(model_build_error("mlp", kMnist, {{"activation", std::string("foo")}}),
            "mlp: activation must be one of relu, gelu, tanh (got 'foo')");
  EXPECT_EQ(model_build_error("mlp", kMnist, {{"hidden", std::vector<std::int64_t>{256, 0}}}),
            "mlp: hidden sizes must be > 0 (got 0)");
  EXPECT_EQ(model_build_error("mlp", kMnist, {{"dropout", 1.0}}), "mlp: dropout must be in [0, 1) (got 1.000000)");
  EXPECT_EQ(model_build_error("mlp", kMnist, {{"dropout", -0.1}}), "mlp: dropout must be in [0, 1) (got -0.100000)");
  EXPECT_EQ(model_build_error("convnet", kMnist, {{"channels", std::vector<std::int64_t>{32}}}),
            "convnet: channels must have exactly 2 entries (got 1)");
  EXPECT_EQ(model_build_error("convnet", kMnist, {{"channels", std::vector<std::int64_t>{32, -1}}}),
            "convnet: channels must be > 0");
  EXPECT_EQ(model_build_error("convnet", kMnist, {{"kernel_size", std::int64_t{4}}}),
            "convnet: kernel_size must be odd and > 0 (got 4)");
  EXPECT_EQ(model_build_error("convnet", kMnist, {{"hidden", std::int64_t{0}}}), "convnet: hidden must be > 0 (got 0)");
  EXPECT_EQ(model_build_error("convnet", kMnist, {{"dropout", 1.5}}),
            "convnet: dropout must be in [0, 1) (got 1.500000)");
  EXPECT_EQ(model_build_error("lenet5", kMnist, {{"activation", std::string("gelu")}}),
            "lenet5: activation must be one of relu, tanh (got 'gelu')");
  EXPECT_EQ(model_build_error("lenet5", {{1, 8, 8}, 10}), "lenet5: input must be at least 12x12 (got 8x8)");
  EXPECT_EQ(model_build_error("convnet", {{1, 3, 28}, 10}),
            "convnet: input must be at least 4x4 for two 2x2 poolings (got 3x28)");
  EXPECT_EQ(model_build_error("mlp", {{28, 28}, 10}),
            "mlp: input shape must be (C, H, W) with positive sizes (got (28, 28))");
  EXPECT_EQ(model_build_error("lenet5", {{1, 28, 28}, 0}), "lenet5: num_classes must be > 0 (got 0)");
}

// A few SGD steps on one fixed tiny batch must lower the (eval-mode) loss clearly. Each class
// has its own smooth fixed pattern (7x7 blown up to 28x28, so pooling keeps it) under noise.
TEST(ModelsPlugin, EveryModelLearnsAFixedTinyBatch) {
  for (const char* name : kModels) {
    torch::manual_seed(1);
    const torch::Tensor y = torch::arange(16) % 10;
    const torch::Tensor patterns = torch::randn({10, 1, 7, 7}).repeat_interleave(4, 2).repeat_interleave(4, 3);
    const torch::Tensor x = patterns.index_select(0, y) + 0.3 * torch::randn({16, 1, 28, 28});
    auto model = build_model(name, kMnist);
    const double before = eval_loss(*model, x, y);
    torch::optim::SGD sgd(model->parameters(), torch::optim::SGDOptions(0.05).momentum(0.9));
    for (int step = 0; step < 30; ++step) {
      model->train();
      sgd.zero_grad();
      torch::Tensor loss = torch::nn::functional::cross_entropy(forward_input(*model, x), y);
      loss.backward();
      sgd.step();
    }
    const double after = eval_loss(*model, x, y);
    EXPECT_LT(after, 0.5 * before) << name << ": loss " << before << " -> " << after;
  }
}

}  // namespace models_test
}  // namespace plugtrain
