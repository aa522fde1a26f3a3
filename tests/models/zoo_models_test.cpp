// The models plugin's zoo (resnet*, wide_resnet50_2, wide_resnet, vgg*_bn, mobilenet_v2,
// baseline_cnn), loaded through the real plugin host: parameter counts equal torchvision's, the
// state_dict names and shapes equal torchvision's (tests/fixtures/torchvision/<model>.txt: one
// "name AxBxC" line per item of torchvision.models.<model>().state_dict(), torchvision 0.26),
// the stem/head options pick the CIFAR form for small inputs, se / zero_init_residual do what
// they say, bad options give one clear line, small forms run forward, and one learns.
// ImageNet forms are only built (a 224x224 forward of the big ones is slow on a small CPU).
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>
#include <torch/nn/functional/loss.h>
#include <torch/optim/sgd.h>

#include "plugins/plugin_host.h"
#include "support/bundled_models.h"

namespace plugtrain {
namespace zoo_models_test {

using namespace plugtrain::testing;  // support/bundled_models.h

const ModelInputs kImageNet{{3, 224, 224}, 1000};
const ModelInputs kCifar{{3, 32, 32}, 10};

using Shapes = std::map<std::string, std::vector<std::int64_t>>;

// What torch.nn.Module.state_dict() would hold: parameters and buffers, by name.
Shapes state_dict_shapes(Model& m) {
  Shapes shapes;
  for (const auto& p : m.named_parameters()) shapes[p.key()] = p.value().sizes().vec();
  for (const auto& b : m.named_buffers()) shapes[b.key()] = b.value().sizes().vec();
  return shapes;
}

// tests/fixtures/torchvision/<model>.txt: "name 64x3x7x7" per line ("scalar" for a 0-d tensor).
Shapes torchvision_shapes(const std::string& model) {
  const std::string path = std::string(PLUGTRAIN_TORCHVISION_DATA) + "/" + model + ".txt";
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  Shapes shapes;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::string name, dims;
    fields >> name >> dims;
    std::vector<std::int64_t>& shape = shapes[name];
    if (dims == "scalar") continue;
    std::istringstream parts(dims);
    for (std::string d; std::getline(parts, d, 'x');) shape.push_back(std::stoll(d));
  }
  return shapes;
}

const char* const kZoo[] = {"resnet18", "resnet34", "resnet50", "resnet101", "wide_resnet50_2", "wide_resnet",
                            "vgg11_bn", "vgg13_bn", "vgg16_bn", "vgg19_bn",  "mobilenet_v2",    "baseline_cnn"};

TEST(ZooModels, RegistersEveryArchitectureWithSchemaDefaultsOfTheDeclaredType) {
  for (const char* name : kZoo) {
    const RegisteredModel* m = bundled_plugins().models().find(name);
    ASSERT_NE(m, nullptr) << name;
    EXPECT_EQ(m->plugin, "models");
    EXPECT_FALSE(m->spec.description.empty()) << name;
    for (const auto& o : m->spec.options) {
      EXPECT_EQ(o.default_value.index(), static_cast<std::size_t>(o.type)) << name << "." << o.name;
      EXPECT_FALSE(o.doc.empty()) << name << "." << o.name;
    }
  }
  EXPECT_TRUE(bundled_plugins().models().shadowed().empty());
}

TEST(ZooModels, ImageNetFormsHaveTorchvisionsParameterCounts) {
  const std::pair<const char*, std::int64_t> expected[] = {
      {"resnet18", 11689512},    {"resnet34", 21797672},       {"resnet50", 25557032},  {"resnet101", 44549160},
      {"vgg11_bn", 132868840},   {"vgg13_bn", 133053736},      {"vgg16_bn", 138365992}, {"vgg19_bn", 143678248},
      {"mobilenet_v2", 3504872}, {"wide_resnet50_2", 68883240}};
  for (const auto& [name, count] : expected) EXPECT_EQ(parameter_count(*build_model(name, kImageNet)), count) << name;
}

TEST(ZooModels, CifarFormsHaveTheReferenceParameterCounts) {
  EXPECT_EQ(parameter_count(*build_model("resnet18", kCifar, {{"stem", std::string("cifar")}})), 11173962);
  EXPECT_EQ(parameter_count(*build_model("wide_resnet", kCifar)), 36479194);  // WRN-28-10
  EXPECT_EQ(parameter_count(
                *build_model("wide_resnet", kCifar, {{"depth", std::int64_t{16}}, {"widen_factor", std::int64_t{4}}})),
            2748890);
  // torchvision.models.mobilenet_v2(width_mult=w, num_classes=10)
  EXPECT_EQ(parameter_count(*build_model("mobilenet_v2", kCifar, {{"width_mult", 0.5}})), 700490);
  EXPECT_EQ(parameter_count(*build_model("mobilenet_v2", kCifar, {{"width_mult", 1.4}})), 4333706);
  // vgg16_bn: features (138365992 minus the ImageNet classifier's 123642856) + Linear(512, 10).
  EXPECT_EQ(parameter_count(*build_model("vgg16_bn", kCifar)), 14723136 + 512 * 10 + 10);
}

TEST(ZooModels, StateDictNamesAndShapesAreTorchvisions) {
  for (const char* name : {"resnet18", "resnet50", "vgg16_bn", "mobilenet_v2", "wide_resnet50_2"}) {
    const Shapes ours = state_dict_shapes(*build_model(name, kImageNet));
    const Shapes theirs = torchvision_shapes(name);
    for (const auto& [key, shape] : theirs) {
      auto it = ours.find(key);
      if (it == ours.end()) {
        ADD_FAILURE() << name << ": missing " << key;
        continue;
      }
      EXPECT_EQ(it->second, shape) << name << ": " << key;
    }
    for (const auto& [key, shape] : ours) EXPECT_TRUE(theirs.count(key)) << name << ": unexpected " << key;
  }
}

TEST(ZooModels, AutoPicksTheCifarFormUpTo64PixelsAndImageNetAbove) {
  auto shape_of = [](const std::string& name, const ModelInputs& in, const std::string& key) {
    return state_dict_shapes(*build_model(name, in)).at(key);
  };
  using S = std::vector<std::int64_t>;
  EXPECT_EQ(shape_of("resnet18", kCifar, "conv1.weight"), (S{64, 3, 3, 3}));
  EXPECT_EQ(shape_of("resnet18", {{3, 64, 64}, 10}, "conv1.weight"), (S{64, 3, 3, 3}));
  EXPECT_EQ(shape_of("resnet18", {{3, 96, 96}, 10}, "conv1.weight"), (S{64, 3, 7, 7}));
  EXPECT_EQ(shape_of("resnet50", {{1, 28, 28}, 10}, "conv1.weight"), (S{64, 1, 3, 3}));  // grayscale
  EXPECT_EQ(shape_of("vgg11_bn", kCifar, "classifier.0.weight"), (S{10, 512}));
  EXPECT_EQ(shape_of("vgg11_bn", {{3, 96, 96}, 10}, "classifier.0.weight"), (S{4096, 512 * 7 * 7}));
  // The CIFAR forms keep more resolution: resnet18 32x32 ends at 4x4 (imagenet stem: 1x1) and
  // mobilenet_v2 at 4x4 (imagenet stem: 1x1); both give the same logits shape.
  torch::NoGradGuard no_grad;
  for (const char* name : {"resnet18", "mobilenet_v2"}) {
    for (const char* stem : {"auto", "imagenet"}) {
      auto m = build_model(name, kCifar, {{"stem", std::string(stem)}});
      m->eval();
      EXPECT_EQ(forward_input(*m, torch::randn({2, 3, 32, 32})).sizes(), (S{2, 10})) << name << " " << stem;
    }
  }
}

TEST(ZooModels, SqueezeExcitationAddsItsParametersToEveryBlock) {
  // resnet18: two BasicBlocks per stage of 64..512 channels, SE hidden width c / 16.
  std::int64_t se = 0;
  for (std::int64_t c : {64, 128, 256, 512}) se += 2 * (c * (c / 16) + c / 16 + (c / 16) * c + c);
  auto plain = build_model("resnet18", kCifar);
  auto with_se = build_model("resnet18", kCifar, {{"se", true}});
  EXPECT_EQ(parameter_count(*with_se), parameter_count(*plain) + se);
  const Shapes shapes = state_dict_shapes(*with_se);
  EXPECT_EQ(shapes.at("layer1.0.se.fc1.weight"), (std::vector<std::int64_t>{4, 64, 1, 1}));
  EXPECT_EQ(shapes.at("layer4.1.se.fc2.bias"), (std::vector<std::int64_t>{512}));
  // resnet50's SE sits on the block output (planes * 4).
  EXPECT_EQ(state_dict_shapes(*build_model("resnet50", kCifar, {{"se", true}})).at("layer1.0.se.fc1.weight"),
            (std::vector<std::int64_t>{16, 256, 1, 1}));
  auto cnn = build_model("baseline_cnn", kCifar, {{"se", true}});
  EXPECT_GT(parameter_count(*cnn), parameter_count(*build_model("baseline_cnn", kCifar)));
  EXPECT_EQ(state_dict_shapes(*cnn).at("stages.2.se.fc1.weight"), (std::vector<std::int64_t>{16, 256, 1, 1}));
}

TEST(ZooModels, ZeroInitResidualZeroesEachBlocksLastBatchNorm) {
  for (const auto& [name, last_bn] : {std::pair{"resnet18", ".bn2.weight"}, std::pair{"resnet50", ".bn3.weight"}}) {
    auto m = build_model(name, kCifar, {{"zero_init_residual", true}});
    int zeroed = 0;
    for (const auto& p : m->named_parameters()) {
      const std::string& key = p.key();
      if (key.rfind("layer", 0) != 0 || key.find(".bn") == std::string::npos ||
          key.find(".weight") == std::string::npos)
        continue;
      const bool last = key.size() > std::strlen(last_bn) &&
                        key.compare(key.size() - std::strlen(last_bn), std::string::npos, last_bn) == 0;
      EXPECT_EQ(p.value().abs().sum().item<double>() == 0.0, last) << name << ": " << key;
      zeroed += last;
    }
    EXPECT_EQ(zeroed, std::string(name) == "resnet18" ? 8 : 16) << name;
    auto plain = build_model(name, kCifar);
    EXPECT_TRUE(torch::all(plain->named_parameters()[std::string("layer1.0") + last_bn] == 1).item<bool>());
  }
}

TEST(ZooModels, BadOptionsAreRefusedWithOneClearLine) {
  EXPECT_EQ(model_build_error("wide_resnet", kCifar, {{"depth", std::int64_t{27}}}),
            "wide_resnet: depth must be 6n + 4 with n >= 1, e.g. 16, 22, 28, 40 (got 27)");
  EXPECT_EQ(model_build_error("wide_resnet", kCifar, {{"widen_factor", std::int64_t{0}}}),
            "wide_resnet: widen_factor must be >= 1 (got 0)");
  EXPECT_EQ(model_build_error("resnet18", kCifar, {{"stem", std::string("tiny")}}),
            "resnet18: stem must be one of imagenet, cifar, auto (got 'tiny')");
  EXPECT_EQ(model_build_error("resnet50", kCifar, {{"width", 0.0}}), "resnet50: width must be > 0 (got 0.000000)");
  EXPECT_EQ(model_build_error("wide_resnet50_2", kCifar, {{"dropout", 1.0}}),
            "wide_resnet50_2: dropout must be in [0, 1) (got 1.000000)");
  EXPECT_EQ(model_build_error("vgg16_bn", kCifar, {{"head", std::string("big")}}),
            "vgg16_bn: head must be one of imagenet, cifar, auto (got 'big')");
  EXPECT_EQ(model_build_error("vgg11_bn", {{3, 16, 16}, 10}),
            "vgg11_bn: input must be at least 32x32 for five 2x2 poolings (got 16x16)");
  EXPECT_EQ(model_build_error("mobilenet_v2", kCifar, {{"width_mult", -1.0}}),
            "mobilenet_v2: width_mult must be > 0 (got -1.000000)");
  EXPECT_EQ(model_build_error("baseline_cnn", kCifar, {{"channels", std::vector<std::int64_t>{}}}),
            "baseline_cnn: channels must have at least 1 entry");
  EXPECT_EQ(model_build_error("baseline_cnn", kCifar, {{"channels", std::vector<std::int64_t>{8, 0}}}),
            "baseline_cnn: channels must be > 0 (got 0)");
  EXPECT_EQ(model_build_error("baseline_cnn", kCifar, {{"convs_per_stage", std::int64_t{0}}}),
            "baseline_cnn: convs_per_stage must be >= 1 (got 0)");
  EXPECT_EQ(model_build_error("baseline_cnn", {{3, 4, 4}, 10}),
            "baseline_cnn: input must be at least 8x8 for 3 2x2 poolings (got 4x4)");
  EXPECT_EQ(model_build_error("resnet34", {{3, 32, 32}, 0}), "resnet34: num_classes must be > 0 (got 0)");
}

TEST(ZooModels, CifarSizedForwardGivesBatchByClasses) {
  torch::manual_seed(0);
  torch::NoGradGuard no_grad;
  const std::vector<std::pair<std::string, std::map<std::string, OptionValue>>> models = {
      {"resnet18", {}},
      {"resnet50", {{"width", 0.25}, {"se", true}, {"dropout", 0.2}}},
      {"wide_resnet50_2", {{"width", 0.25}}},
      {"wide_resnet", {{"depth", std::int64_t{10}}, {"widen_factor", std::int64_t{2}}, {"dropout", 0.3}}},
      {"vgg11_bn", {}},
      {"mobilenet_v2", {}},
      {"baseline_cnn",
       {{"channels", std::vector<std::int64_t>{16, 32, 64, 128}},
        {"convs_per_stage", std::int64_t{2}},
        {"se", true},
        {"dropout", 0.2}}},
  };
  const torch::Tensor x = torch::randn({2, 3, 32, 32});
  for (const auto& [name, options] : models) {
    auto m = build_model(name, kCifar, options);
    for (bool train : {false, true}) {
      m->train(train);
      EXPECT_EQ(forward_input(*m, x).sizes(), (std::vector<std::int64_t>{2, 10}))
          << name << (train ? " train" : " eval");
    }
  }
  // Grayscale input and another class count.
  auto gray = build_model("resnet18", {{1, 28, 28}, 7});
  gray->eval();
  EXPECT_EQ(forward_input(*gray, torch::randn({3, 1, 28, 28})).sizes(), (std::vector<std::int64_t>{3, 7}));
}

TEST(ZooModels, SmallBaselineCnnLearnsAFixedTinyBatch) {
  torch::manual_seed(1);
  const torch::Tensor y = torch::arange(16) % 4;
  const torch::Tensor patterns = torch::randn({4, 3, 4, 4}).repeat_interleave(4, 2).repeat_interleave(4, 3);
  const torch::Tensor x = patterns.index_select(0, y) + 0.3 * torch::randn({16, 3, 16, 16});
  auto model =
      build_model("baseline_cnn", {{3, 16, 16}, 4}, {{"channels", std::vector<std::int64_t>{8, 16}}, {"se", true}});
  const double before = eval_loss(*model, x, y);
  torch::optim::SGD sgd(model->parameters(), torch::optim::SGDOptions(0.05).momentum(0.9));
  for (int step = 0; step < 40; ++step) {
    model->train();
    sgd.zero_grad();
    torch::nn::functional::cross_entropy(forward_input(*model, x), y).backward();
    sgd.step();
  }
  const double after = eval_loss(*model, x, y);
  EXPECT_LT(after, 0.5 * before) << "loss " << before << " -> " << after;
}

}  // namespace zoo_models_test
}  // namespace plugtrain
