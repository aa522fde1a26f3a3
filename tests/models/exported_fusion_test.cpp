// The graph pass over exported graphs (plugins/exported/graph_fusion.h) on graphs exported from
// Python: what it drops and fuses (node counts), and that the graph it leaves computes what the
// graph as exported does, outputs and every gradient.
//
// The tolerance, from the arithmetic the pass changes (fp32, unit roundoff u = 6e-8): dropped
// nodes change nothing (they gave back their input); linear+GELU runs x @ w^T (what linear does
// without its bias) then ATen's GELU formulas with the bias added in the same pass: values agree
// to a few u, the bias's gradient is a column sum in another order (|error| <= R u sum|g|, R
// rows: 64 here, < 4e-6 of the largest); add+LayerNorm takes a two-pass mean and variance against
// ATen's Welford: a few u times |x - mean| / std (<= sqrt(C) ~ 6 for C = 32). Through the small
// networks here (two blocks) these stay below 1e-5 of each tensor's largest value, which a
// wrong fusion (a missed bias, the other GELU, a lost residual) exceeds by orders of magnitude.
// Where the kernels do not apply (float64 here, the emulated device, autocast) a fused node runs
// the nodes it replaced: the graph's own arithmetic, bitwise.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include <ATen/Parallel.h>
#include <gtest/gtest.h>

#include "data/model_description.h"
#include "exported_model.h"
#include "support/run_process.h"

namespace plugtrain::exported {
namespace {

namespace fs = std::filesystem;

constexpr double kFusedArithmetic = 1e-5;  // relative to the tensor's largest value (above)

// A module with a node of every kind the pass drops, and one of each fusion (the GELU in tanh
// form): the pass must find them all in the graph torch.export makes of it.
const char* kNoOpNet = R"(import torch, torch.nn as nn, torch.nn.functional as F
class Body(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc, self.proj = nn.Linear(16, 32), nn.Linear(16, 32)
        self.act, self.ln, self.out = nn.GELU(approximate="tanh"), nn.LayerNorm(32), nn.Linear(32, 10)
    def forward(self, x):
        b = x.size(0)
        x = x.view(b, 16).reshape(b, -1)              # two views to its own sizes
        x = F.dropout(x.clone(), 0.0, self.training)  # a copy in a graph that writes nothing in place, p = 0
        x = x.flatten(1, 1)                           # one dimension flattened
        s = self.act(self.fc(x)) + self.proj(x)       # linear + GELU (tanh)
        y = self.ln(s)                                # add + LayerNorm
        return self.out(y + s.view(b, 32))            # b is x's size: not proven s's, kept
class Net(nn.Module):  # one top-level submodule: fusions join nodes of one
    def __init__(self):
        super().__init__()
        self.body = Body()
    def forward(self, x):
        return self.body(x)
)";

// Exports (once per process) the test's models with python/export_model.py: the twins' GPT and
// ViT (python/transformer_twins.py) and kNoOpNet.
fs::path exported(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("exported_fusion_" + std::to_string(::getpid()));
  const fs::path file = dir / (name + ".pt2");
  if (fs::exists(file)) return file;
  fs::create_directories(dir);
  std::ofstream(dir / "noop_net.py") << kNoOpNet;
  const std::string script = PLUGTRAIN_SOURCE_DIR "/python/export_model.py ";
  const std::string twins = PLUGTRAIN_SOURCE_DIR "/python/transformer_twins.py";
  std::string spec;
  if (name == "gpt")
    spec = twins +
           ":GPT --input 16 --dtype int64 --vocab 64 --args "
           "'{\"vocab\": 64, \"context\": 16, \"n_layer\": 2, \"n_head\": 2, \"n_embd\": 32}'";
  else if (name == "vit")
    spec = twins +
           ":ViT --input 1x28x28 --args "
           "'{\"patch\": 7, \"width\": 32, \"depth\": 2, \"heads\": 2, \"mlp_ratio\": 4.0, \"classes\": 10}'";
  else
    spec = (dir / "noop_net.py").string() + ":Net --input 16";
  const auto r = testing::run_process(std::string(PLUGTRAIN_PYTHON) + " " + script + spec + " --out " + file.string());
  if (r.exit_code != 0) throw std::runtime_error("export_model.py " + name + " failed: " + r.out);
  return file;
}

ModelDescription description_of(const std::string& name) {
  if (name == "vit") return image_model_description({1, 28, 28}, 10);
  ModelDescription d;
  if (name == "gpt") {
    d.batch.add("input", {c10::ScalarType::Long, {16}, ""});
    d.target.kind_ = DatasetTargets::sequence;
    d.target.classes_ = d.target.model_outputs_ = 64;
  } else {
    d.batch.add("input", {c10::ScalarType::Float, {16}, ""});
    d.target.classes_ = d.target.model_outputs_ = 10;
  }
  return d;
}

at::Tensor input_of(const std::string& name, at::ScalarType dtype) {
  at::manual_seed(7);
  if (name == "gpt") return at::randint(0, 64, {4, 16}, at::kLong);
  return at::randn(name == "vit" ? std::vector<std::int64_t>{4, 1, 28, 28} : std::vector<std::int64_t>{4, 16}, dtype);
}

// One training forward and backward of `name` with the pass or without: the output, then every
// parameter's gradient, in the parameters' order.
std::vector<at::Tensor> forward_backward(const std::string& name, bool graph_pass, at::ScalarType dtype) {
  const ModelDescription d = description_of(name);
  ExportedModel net(load_program(exported(name), graph_pass), d.batch, d.target);
  net.to(dtype);
  net.train();
  const at::Tensor out = net.forward_batch({{"input", input_of(name, dtype)}}).at("output");
  at::manual_seed(11);
  (out * at::randn(out.sizes(), out.options())).sum().backward();
  std::vector<at::Tensor> all{out.detach()};
  for (const at::Tensor& p : net.parameters()) all.push_back(p.grad().defined() ? p.grad() : at::zeros_like(p));
  return all;
}

double largest_difference(const std::vector<at::Tensor>& got, const std::vector<at::Tensor>& want) {
  double worst = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    const double scale = std::max(want[i].abs().max().item<double>(), 1e-30);
    worst = std::max(worst, (got[i] - want[i]).abs().max().item<double>() / scale);
  }
  return worst;
}

struct Expected {
  std::string model;
  std::size_t before, after, dropped, linear_gelu, add_layer_norm;
};

class GraphPass : public ::testing::TestWithParam<Expected> {};

TEST_P(GraphPass, DropsAndFusesWhatItShouldAndComputesWhatTheGraphDoes) {
  const Expected& e = GetParam();
  at::set_num_threads(1);
  const GraphPassCounts counts = load_program(exported(e.model))->graph.pass_counts();
  EXPECT_EQ(load_program(exported(e.model), false)->graph.nodes().size(), e.before);
  EXPECT_EQ(counts.nodes_before, e.before);
  EXPECT_EQ(counts.nodes_after, e.after);
  EXPECT_EQ(counts.dropped, e.dropped);
  EXPECT_EQ(counts.linear_gelu, e.linear_gelu);
  EXPECT_EQ(counts.add_layer_norm, e.add_layer_norm);

  const auto as_exported = forward_backward(e.model, false, at::kFloat);
  const auto passed = forward_backward(e.model, true, at::kFloat);
  ASSERT_EQ(passed.size(), as_exported.size());
  const double worst = largest_difference(passed, as_exported);
  EXPECT_LE(worst, kFusedArithmetic) << e.model;
  EXPECT_GT(as_exported[0].abs().max().item<double>(), 0.0);
  // float64: no fused kernel applies, so every fused node runs the nodes it replaced.
  const auto doubled = forward_backward(e.model, true, at::kDouble);
  const auto doubled_as_exported = forward_backward(e.model, false, at::kDouble);
  EXPECT_EQ(largest_difference(doubled, doubled_as_exported), 0.0) << e.model;
  std::printf(
      "[ %s ] %zu nodes -> %zu (%zu dropped, %zu linear+GELU, %zu add+LayerNorm); fused float32 within "
      "%.2g of the graph as exported, %zu tensors\n",
      e.model.c_str(), counts.nodes_before, counts.nodes_after, counts.dropped, counts.linear_gelu,
      counts.add_layer_norm, worst, passed.size());
}

INSTANTIATE_TEST_SUITE_P(Exported, GraphPass,
                         // noop_net: view, reshape, clone, dropout and flatten dropped.
                         // gpt: the twins' 2 blocks, c_fc with its GELU and the first residual with ln_2
                         // each (the second residual meets the next block's ln_1, another unit). vit:
                         // the same, and the head's [:, 0] slices the whole batch first.
                         ::testing::Values(Expected{"noop_net", 14, 7, 5, 1, 1}, Expected{"gpt", 45, 41, 0, 2, 2},
                                           Expected{"vit", 49, 44, 1, 2, 2}),
                         [](const auto& info) { return info.param.model; });

}  // namespace
}  // namespace plugtrain::exported
