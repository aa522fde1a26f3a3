// Tasks from plugins (SDK 3.6), as a user meets them: `plugtrain tasks` lists a plugin's task with
// its metrics and their directions; `[task] name = "focal"` trains real Fashion-MNIST with the
// example focal-loss plugin, its metrics reach summary.json and metrics.csv, and a minimised
// metric of the plugin works as checkpoint.monitor; bad options, a wrongly registered task and a
// model that declares other targets each get one line and exit 2.
// ctest-label: e2e
// ctest-label PluginTasks: unit
#include <filesystem>
#include <fstream>
#include <sstream>

#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "checkpoint/checkpoint.h"
#include "plugins/plugin_host.h"
#include "run/validate.h"
#include "support/experiment_folder.h"
#include "support/fashion_mnist.h"
#include "support/run_process.h"
#include "task/plugin_task.h"

namespace plugtrain {
namespace plugin_tasks_test {

using testing::slurp;
namespace fs = std::filesystem;

std::string plugin_folder(const std::string& name) { return std::string(PLUGTRAIN_TEST_PLUGIN_DIR) + "/" + name; }
std::string plugin_path(const std::string& name) { return " --plugin-path " + plugin_folder(name); }

// Inline on purpose: ABadPluginTaskOptionIsOneLineWithItsPlace names a position (exp.toml:23:9) after this text.
std::string fashion_base() {
  return "[experiment]\nname = \"focal\"\nseed = 5\n[backend]\nname = \"cpu\"\n[model]\nname = \"mlp\"\nhidden = [64]\n"
         "[data]\n" +
         testing::fashion_mnist_path_line() +
         "train_subset = 6000\ntest_subset = 2000\nbatch_size = 64\ntest_batch_size = 500\n"
         "[optim]\nname = \"adam\"\nlr = 0.002\n[train]\nepochs = 3\nlog_interval = 0\n";
}

class PluginTaskTest : public testing::ExperimentFolderTest {
 protected:
  PluginTaskTest() : ExperimentFolderTest("plugin_task", fashion_base()) {}
  testing::ProcessResult run_with(const std::string& tables, const std::string& plugins = plugin_path("focal_loss")) {
    write_experiment(fashion_base() + tables);
    return plugtrain("run exp.toml --no-cache" + plugins);
  }
  fs::path version0() const { return dir_ / "runs" / "focal" / "version_0"; }
};

TEST(PluginTasks, TasksListsThePluginsTaskWithItsTargetsAndMetricDirections) {
  const testing::ProcessResult r =
      testing::run_process(testing::plugtrain_command("tasks" + plugin_path("focal_loss")));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("focal  (plugin focal_loss)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("gamma : float = 2    focusing"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("test_balanced_accuracy (max)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("test_nll (min)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("classification  "), std::string::npos) << "the built-in tasks stay listed:\n" << r.out;
}

// With gamma 0 the focal loss is cross-entropy: the adapter passes outputs and targets through
// unchanged, and the plugin's metrics come back under their names.
TEST(PluginTasks, FocalWithGammaZeroIsCrossEntropyThroughTheAdapter) {
  SearchOptions search;
  search.cli_paths = {plugin_folder("focal_loss")};
  const PluginHost host(search);
  const RegisteredTask* entry = host.tasks().find("focal");
  ASSERT_NE(entry, nullptr);
  const TaskDefinition definition = definition_from_plugin(entry->spec, entry->plugin);
  const std::unique_ptr<Task> task = definition.factory({4, {}, {}}, Options({{"gamma", 0.0}}));
  at::manual_seed(0);
  const at::Tensor outputs = at::randn({16, 4});
  const at::Tensor targets = at::randint(0, 4, {16}, at::kLong);
  EXPECT_NEAR(task->loss(outputs, targets).item<double>(), at::cross_entropy_loss(outputs, targets).item<double>(),
              1e-6);
  const at::Tensor stats = task->statistics(TaskPass::evaluation, outputs, targets);
  ASSERT_EQ(stats.numel(), task->statistics_size(TaskPass::evaluation));
  std::vector<double> totals(stats.numel());
  for (std::int64_t i = 0; i < stats.numel(); ++i) totals[i] = stats[i].item<double>();
  const std::vector<MetricValue> values = task->metric_values(TaskPass::evaluation, totals, 16);
  ASSERT_EQ(values.size(), 3u);
  EXPECT_EQ(values[0].name, "accuracy");
  EXPECT_NEAR(values[0].value, (outputs.argmax(1) == targets).sum().item<double>() / 16, 1e-9);
  EXPECT_EQ(values[2].name, "nll");
  EXPECT_NEAR(values[2].value, at::cross_entropy_loss(outputs, targets).item<double>(), 1e-5);
}

TEST_F(PluginTaskTest, FocalTrainsFashionMnistAndAMinimisedPluginMetricPicksTheBestCheckpoint) {
  const testing::ProcessResult r =
      run_with("[task]\nname = \"focal\"\ngamma = 1.5\n[checkpoint]\nsave = \"best\"\nmonitor = \"test_nll\"\n");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("task: focal, metrics accuracy (training), accuracy, balanced_accuracy, nll (test)"),
            std::string::npos)
      << r.out;
  const nlohmann::json s = nlohmann::json::parse(slurp(version0() / "summary.json"));
  EXPECT_EQ(s["task"], "focal");
  EXPECT_EQ(s["metric"], "accuracy");
  EXPECT_GT(s["final_test_accuracy"].get<double>(), 0.75) << "10 classes: chance is 0.1";
  const double balanced = s["final_test"]["balanced_accuracy"].get<double>();
  EXPECT_GT(balanced, 0.7);
  EXPECT_LT(balanced, 1.0);
  // metrics.csv carries the plugin's test metrics; the best checkpoint is the epoch of least nll.
  std::ifstream csv(version0() / "metrics.csv");
  std::string header, line;
  std::getline(csv, header);
  ASSERT_NE(header.find("test_nll"), std::string::npos) << header;
  std::vector<std::string> columns;
  for (std::stringstream h(header); std::getline(h, line, ',');) columns.push_back(line);
  const auto nll_column = std::find(columns.begin(), columns.end(), "test_nll") - columns.begin();
  double least = 1e9;
  int best_epoch = 0, epoch = 0;
  while (std::getline(csv, line)) {
    std::vector<std::string> cells;
    for (std::stringstream row(line); std::getline(row, line, ',');) cells.push_back(line);
    ++epoch;
    if (std::stod(cells.at(nll_column)) < least) {
      least = std::stod(cells.at(nll_column));
      best_epoch = epoch;
    }
  }
  ASSERT_EQ(epoch, 3);
  const CheckpointState best = read_checkpoint_info(version0() / "checkpoints" / "best.ckpt").state;
  ASSERT_NE(best.find("loop"), nullptr);
  EXPECT_EQ(best.find("loop")->int_at("epochs_done"), best_epoch) << "best.ckpt is the epoch of the least test_nll";
}

TEST_F(PluginTaskTest, ABadPluginTaskOptionIsOneLineWithItsPlace) {
  const testing::ProcessResult r = run_with("[task]\nname = \"focal\"\ngamma = -1.0\n");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("exp.toml:23:9: task.gamma"), std::string::npos) << r.out;
}

// A sweep's scheduler ranks trials by a plugin task's metric, in its direction.
TEST_F(PluginTaskTest, AnAshaSweepRanksByAPluginTasksMetric) {
  write_experiment(fashion_base() +
                   "[task]\nname = \"focal\"\n[checkpoint]\nsave = \"last\"\n[sweep]\n"
                   "optim.lr = [0.001, 0.003]\nscheduler = \"asha\"\nmetric = \"test_nll\"\nmin_epochs = 1\n");
  const testing::ProcessResult r = plugtrain("sweep exp.toml --dry-run" + plugin_path("focal_loss"));
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("test_nll"), std::string::npos) << r.out;
}

TEST_F(PluginTaskTest, AWronglyRegisteredTaskRefusesItsPluginAndSaysWhyWhenTheTaskIsAskedFor) {
  const testing::ProcessResult r = run_with("[task]\nname = \"clashing\"\n", plugin_path("broken_tasks"));
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("unknown task 'clashing'"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("plugin 'broken_tasks'"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("evaluation metric 'loss' is the host's own"), std::string::npos) << r.out;
}

TEST_F(PluginTaskTest, AModelThatDeclaresOtherTargetsRefusesTheTask) {
  std::string experiment = fashion_base() + "[task]\nname = \"focal\"\n";
  experiment.replace(experiment.find("name = \"mlp\"\nhidden = [64]"),
                     std::string("name = \"mlp\"\nhidden = [64]").size(), "name = \"unet\"");
  write_experiment(experiment);
  const testing::ProcessResult r = plugtrain("run exp.toml" + plugin_path("focal_loss"));
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(
      r.out.find(
          "model 'unet' (plugin 'models') serves tasks on a class per pixel; task 'focal' learns one class per sample"),
      std::string::npos)
      << r.out;
}

}  // namespace plugin_tasks_test
}  // namespace plugtrain
