// Bad input a user makes, each reproduced as they would make it: one line naming the cause, a
// non-zero exit, and nothing lost or written where it should not be.
// ctest-label: e2e
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/experiment_folder.h"
#include "support/experiment_toml.h"
#include "support/faults.h"
#include "support/run_process.h"

namespace plugtrain {
namespace bad_input_test {

using ::testing::HasSubstr;
using ::testing::Not;
using testing::run_process;
using testing::shell_quote;
using testing::slurp;
namespace faults = testing::faults;
namespace fs = std::filesystem;

// A small MLP on 64 synthetic 4x4 samples, Adam, one epoch.
const testing::ExperimentToml kExperiment = testing::ExperimentToml("bad")
                                                .set("model.name", "mlp")
                                                .set("model.hidden", {8})
                                                .set("data.dataset", "synthetic")
                                                .set("data.synthetic_shape", {1, 4, 4})
                                                .set("data.synthetic_train_size", 64)
                                                .set("data.synthetic_test_size", 16)
                                                .set("data.batch_size", 16)
                                                .set("train.epochs", 1);

class BadInputTest : public testing::ExperimentFolderTest {
 protected:
  BadInputTest() : ExperimentFolderTest("bad", kExperiment.text()) {}
  // What a run says to `--set key=value`.
  testing::ProcessResult run_with(const std::string& assignment) {
    return plugtrain("run exp.toml --set " + shell_quote(assignment));
  }
  // `plugtrain plugins --json` with a fault injected: the listing's entry for the faulty plugin
  // (null when there is none), and what the command wrote on stderr in `err`.
  nlohmann::json faulty_plugin_listed(const faults::Fault& fault, std::string& err) const {
    const fs::path stderr_file = dir_ / "plugins.err";
    const auto r =
        run_process(fault.env + command("plugins --json" + fault.args) + " 2>" + shell_quote(stderr_file.string()),
                    /*merge_stderr=*/false);
    err = slurp(stderr_file);
    EXPECT_EQ(r.exit_code, 0) << r.out << err;
    const nlohmann::json listed = nlohmann::json::parse(r.out);
    for (const auto& p : listed.at("plugins"))
      if (p.at("name") == "faulty") return p;
    return nullptr;
  }
};

TEST_F(BadInputTest, ExportNeverOverwritesTheCheckpointItExports) {
  ASSERT_EQ(plugtrain("run exp.toml").exit_code, 0);
  const fs::path ckpt = dir_ / "runs" / "bad" / "version_0" / "checkpoints" / "last.ckpt";
  const std::string before = slurp(ckpt);
  ASSERT_FALSE(before.empty());
  auto same = plugtrain("export " + shell_quote(ckpt.string()) + " " + shell_quote(ckpt.string()));
  EXPECT_NE(same.exit_code, 0) << same.out;
  EXPECT_NE(same.out.find("is the checkpoint being exported"), std::string::npos) << same.out;
  fs::create_symlink(ckpt, dir_ / "link.pt");
  auto linked = plugtrain("export " + shell_quote(ckpt.string()) + " link.pt");
  EXPECT_NE(linked.exit_code, 0) << linked.out;
  EXPECT_EQ(slurp(ckpt), before) << "the checkpoint is untouched";
  EXPECT_EQ(plugtrain("run exp.toml --resume last --set train.epochs=2").exit_code, 0) << "and still resumes";
}

TEST_F(BadInputTest, ACheckpointGivenAsModelInitSaysWhatToDo) {
  ASSERT_EQ(plugtrain("run exp.toml").exit_code, 0);
  auto r = run_with("model.init=\"runs/bad/version_0/checkpoints/last.ckpt\"");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("is a plugtrain checkpoint, not a state_dict: continue it with --resume"), std::string::npos)
      << r.out;
  EXPECT_FALSE(fs::exists(dir_ / "runs" / "bad" / "version_1")) << "refused before any work";
}

TEST_F(BadInputTest, LibTorchErrorsAreOneLineWithoutItsStackTrace) {
  auto r = run_with("model.hidden=[100000000000]");  // 6.4 TB of weights
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("plugtrain: error: plugin 'models': building model threw: "), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("frame #"), std::string::npos) << r.out;
}

// --no-<backend> takes the name a backend's plugin gives it (the host knows no device by name):
// that backend is never chosen, and a name no plugin gives, or another unknown flag, is refused.
TEST_F(BadInputTest, NoBackendFlagsTakeTheNamesThePluginsGive) {
  auto off = plugtrain("run exp.toml --no-cpu --set backend.name='\"cpu\"'");
  EXPECT_EQ(off.exit_code, 1) << off.out;
  EXPECT_THAT(off.out, HasSubstr("backend 'cpu' is named in [backend] name but also disabled"));
  auto typo = plugtrain("run exp.toml --no-cpuu");
  EXPECT_EQ(typo.exit_code, 2) << typo.out;
  EXPECT_THAT(typo.out, HasSubstr("--no-cpuu: no backend is named 'cpuu' (did you mean 'cpu'?)"));
  auto unknown = plugtrain("run exp.toml --frobnicate");
  EXPECT_EQ(unknown.exit_code, 2) << unknown.out;
  EXPECT_THAT(unknown.out, HasSubstr("--frobnicate"));
  auto without_mps = plugtrain("run exp.toml --no-mps");
  ASSERT_EQ(without_mps.exit_code, 0) << without_mps.out;
  EXPECT_NE(nlohmann::json::parse(slurp(dir_ / "runs" / "bad" / "version_0" / "summary.json"))["backend"], "mps");
}

// A backend whose probe segfaults or never returns costs that backend, not the command.
TEST_F(BadInputTest, APluginWhoseProbeCrashesOrHangsIsUnusableNotFatal) {
  const auto crash = faults::backend_entry("probe", "crash");
  std::string err;
  const nlohmann::json crashed = faulty_plugin_listed(crash, err);
  EXPECT_THAT(err, Not(HasSubstr("fatal"))) << "the parent reports the child's crash, once";
  EXPECT_EQ(crashed.at("status"), "unusable") << crashed;
  EXPECT_THAT(crashed.at("probe").at("message").get<std::string>(),
              HasSubstr("plugin 'faulty': the probe crashed: signal 11 (SIGSEGV)"));

  auto hang = faults::backend_entry("probe", "hang");
  hang.env += "export PLUGTRAIN_PROBE_TIMEOUT=1; ";
  const nlohmann::json hung = faulty_plugin_listed(hang, err);
  EXPECT_EQ(hung.at("status"), "unusable") << hung;
  EXPECT_THAT(hung.at("probe").at("message").get<std::string>(),
              HasSubstr("plugin 'faulty': the probe did not answer within 1.00 s"));

  // Automatic selection passes it over (prefer: the same order on a machine with a GPU).
  auto run = plugtrain_with(crash, "run exp.toml --set 'backend.prefer=[\"faulty\", \"cpu\"]'");
  EXPECT_EQ(run.exit_code, 0) << run.out;
  EXPECT_NE(run.out.find("backend: skipped faulty: error: plugin 'faulty': the probe crashed"), std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("backend: chose cpu"), std::string::npos) << run.out;
}

// Where the automatically chosen backend has fewer devices than asked for (a one-GPU server,
// here the one-device "faulty" backend, which the automatic order meets before the CPU), the
// line says how the same file runs its processes on the CPU, as it does on a CPU-only machine.
TEST_F(BadInputTest, MoreDevicesThanTheChosenBackendHasSaysHowToRunThemOnTheCpu) {
  const auto r = plugtrain_with({"", faults::test_plugin("fault_backend")},
                                "run exp.toml --set backend.devices=2 --set 'backend.prefer=[\"faulty\", \"cpu\"]'");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("backend.devices = 2 but faulty has 1 device (chosen automatically; backend.name = \"cpu\" runs "
                       "2 processes on the CPU)"),
            std::string::npos)
      << r.out;
}

// A crash the host cannot isolate (a plugin's memory query during a run) is at least named.
TEST_F(BadInputTest, ACrashInsideAPluginCallIsNamed) {
  auto r = plugtrain_with(faults::backend_entry("memory", "crash"), "run exp.toml" + faults::select_faulty_backend());
  EXPECT_EQ(r.exit_code, 128 + 11) << r.out;
  EXPECT_NE(r.out.find("plugtrain: fatal: signal 11 (SIGSEGV) inside plugin 'faulty' (memory)"), std::string::npos)
      << r.out;
}

// Every entry point of a backend and a models plugin, throwing in turn: one line naming the
// plugin and what it was doing, a non-zero exit, never a crash or an uncaught exception.
TEST_F(BadInputTest, APluginThatThrowsAtAnyEntryPointIsNamedInOneLine) {
  struct Case {
    faults::Fault fault;
    std::string args, expected;
    int exit_code;
  };
  const std::string select = faults::select_faulty_backend();
  const std::vector<Case> cases = {
      {faults::backend_entry("create_backend", "throw"), select,
       "backend 'faulty': plugin 'faulty' (" + std::string(PLUGTRAIN_TEST_PLUGIN_DIR) +
           "/fault_backend/test_fault_backend.so) did not load: plugin 'faulty': register threw: injected fault in "
           "create_backend",
       1},
      {faults::backend_entry("capabilities", "throw"), select,
       "plugin 'faulty': capabilities threw: injected fault in capabilities", 1},
      {faults::backend_entry("probe", "throw"), select, "plugin 'faulty': probe threw: injected fault in probe", 1},
      {faults::backend_entry("loader_config", "throw"), select,
       "plugin 'faulty': loader_config threw: injected fault in loader_config", 1},
      {faults::backend_entry("plan_multi_device", "throw"), select,
       "plugin 'faulty': plan_multi_device threw: injected fault in plan_multi_device", 1},
      {faults::backend_entry("memory", "throw"), select, "plugin 'faulty': memory threw: injected fault in memory", 1},
      {faults::model_entry("register_models", "throw"), "",
       "unknown model 'faultnet'; available: exported, mlp, convnet, lenet5, resnet18, resnet34, resnet50, resnet101, "
       "wide_resnet50_2, wide_resnet, vgg11_bn, vgg13_bn, vgg16_bn, vgg19_bn, mobilenet_v2, baseline_cnn, unet, crnn, "
       "gpt, vit, tfnet_lite; plugin 'faultmodels' (",
       2},
      {faults::model_entry("create_model", "throw"), "",
       "plugin 'faultmodels': building model threw: injected fault in create_model", 1},
      {faults::model_entry("forward", "throw"), "", "injected fault in forward", 1},
  };
  const std::string without_hidden =
      testing::ExperimentToml(kExperiment).unset("model.hidden").text();  // faultnet has none
  for (const Case& c : cases) {
    write_experiment(c.fault.args.find("faultnet") != std::string::npos ? without_hidden : kExperiment.text());
    auto r = plugtrain_with(c.fault, "run exp.toml" + c.args);
    EXPECT_EQ(r.exit_code, c.exit_code) << c.fault.env << r.out;
    EXPECT_NE(r.out.find(c.expected), std::string::npos) << c.fault.env << r.out;
    EXPECT_EQ(r.out.find("terminate called"), std::string::npos) << c.fault.env << r.out;
    EXPECT_EQ(r.out.find("fatal: signal"), std::string::npos) << c.fault.env << r.out;
  }
}

// A models plugin's OptionRules: every kind is checked before any work, with the
// value's file:line:col (the column of the value), exit 2 and no run folder.
TEST_F(BadInputTest, ModelOptionsOutsideTheirRulesAreRefusedBeforeAnyWork) {
  // Inline on purpose: the expected messages name positions (exp.toml:7:10) in this text.
  const std::string head = "[experiment]\nname = \"bad\"\n[data]\ndataset = \"synthetic\"\n[model]\n";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"name = \"mlp\"\nhidden = [8, -5]", "exp.toml:7:10: model.hidden[1] must be >= 1 (got -5)"},
      {"name = \"mlp\"\ndropout = 1.0", "exp.toml:7:11: model.dropout must be < 1 (got 1)"},
      {"name = \"mlp\"\nactivation = \"gelo\"",
       "exp.toml:7:14: model.activation must be one of relu, gelu, tanh (got \"gelo\") (did you mean 'gelu'?)"},
      {"name = \"convnet\"\nchannels = [8]", "exp.toml:7:12: model.channels must have exactly 2 entries (got 1)"},
      {"name = \"convnet\"\nkernel_size = 0", "exp.toml:7:15: model.kernel_size must be >= 1 (got 0)"},
  };
  for (const auto& [model, expected] : cases) {
    write_experiment(head + model + "\n");
    auto r = plugtrain("run exp.toml");
    EXPECT_EQ(r.exit_code, 2) << model << "\n" << r.out;
    EXPECT_NE(r.out.find("plugtrain: error: " + expected), std::string::npos) << model << "\n" << r.out;
    EXPECT_FALSE(fs::exists(dir_ / "runs")) << "refused before any work: " << model;
  }
}

// Rules that do not fit the model's options are the plugin's mistake: it does not load, and a
// run that asks for its model says why.
TEST_F(BadInputTest, AModelsPluginWhoseRulesDoNotFitItsOptionsDoesNotLoad) {
  auto r = plugtrain_with({faults::fault_switch("rules", "misfit"), faults::test_plugin("fault_models")},
                          "run exp.toml --set model.name=\\\"faultnet\\\"");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("did not load: plugin 'faultmodels': model 'faultnet': a rule names option 'nope', which the "
                       "model does not have"),
            std::string::npos)
      << r.out;
}

// The lifecycle hooks: init before use, shutdown at the end; an init that says no (or
// throws) refuses the plugin with its reason, and a run that names it says so.
TEST_F(BadInputTest, PluginInitAndShutdownHooksFrameItsUseAndAFailingInitRefusesIt) {
  const std::string log = (dir_ / "hooks.txt").string();
  auto fine = plugtrain_with(
      {"export PLUGTRAIN_TEST_HOOK_LOG=" + shell_quote(log) + "; ", faults::test_plugin("fault_backend")},
      "run exp.toml" + faults::select_faulty_backend());
  EXPECT_EQ(fine.exit_code, 0) << fine.out;
  EXPECT_EQ(slurp(log), "init\nshutdown\n");

  auto refused =
      plugtrain_with(faults::backend_entry("init", "refuse"), "run exp.toml" + faults::select_faulty_backend());
  EXPECT_EQ(refused.exit_code, 1) << refused.out;
  EXPECT_NE(refused.out.find("did not load: plugin 'faulty': init: the device firmware is too old"), std::string::npos)
      << refused.out;
  std::string err;
  const nlohmann::json threw = faulty_plugin_listed(faults::backend_entry("init", "throw"), err);
  EXPECT_EQ(threw.at("status"), "refused") << threw;
  EXPECT_THAT(threw.at("reason").get<std::string>(), HasSubstr("plugin 'faulty': init threw: injected fault in init"));
  auto failing = faults::backend_entry("shutdown", "throw");
  failing.env += "export PLUGTRAIN_TEST_HOOK_LOG=" + shell_quote(log) + "; ";
  fs::remove(log);
  auto shutdown = plugtrain_with(failing, "run exp.toml" + faults::select_faulty_backend());
  EXPECT_EQ(shutdown.exit_code, 0) << "a failing shutdown costs nothing: " << shutdown.out;
  EXPECT_EQ(slurp(log), "init\n") << "shutdown was called and threw before logging";
}

// A backend whose file cannot even be loaded (its library is missing) has no name yet; a run
// that names it still hears why, by the file name plugtrain_add_plugin gives it.
TEST_F(BadInputTest, ABackendWhoseFileCannotLoadIsNamedWithTheLoadersReason) {
  auto r = plugtrain("run exp.toml --set backend.name=\\\"needsvanished\\\"" +
                     faults::test_plugin("missing_dependency_named"));
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("plugtrain: error: backend 'needsvanished': its plugin file "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("plugtrain_backend_needsvanished.so did not load: cannot be loaded: "), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("libplugtrain_vanished.so"), std::string::npos) << r.out;
}

TEST_F(BadInputTest, AHugeKeyIsNotEchoedInFull) {
  auto r = run_with("data." + std::string(100000, 'k') + "=1");
  EXPECT_EQ(r.exit_code, 2) << r.out.substr(0, 300);
  EXPECT_NE(r.out.find("characters cut"), std::string::npos) << r.out.substr(0, 300);
  EXPECT_LT(r.out.size(), 2000u);
}

TEST_F(BadInputTest, AMissingPluginPathIsAnError) {
  auto r = plugtrain("run exp.toml --plugin-path /no/such/plugins");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_EQ(r.out, "plugtrain: error: --plugin-path: Path does not exist: /no/such/plugins (see --help)\n");
  EXPECT_FALSE(fs::exists(dir_ / "runs"));
}

TEST_F(BadInputTest, TheExperimentFileMustBeARegularFile) {
  auto folder = plugtrain("run " + shell_quote(dir_.string()));
  EXPECT_EQ(folder.exit_code, 2) << folder.out;
  EXPECT_NE(folder.out.find(": is a folder, not an experiment file"), std::string::npos) << folder.out;

  auto zero = plugtrain("run /dev/zero");  // would never end
  EXPECT_EQ(zero.exit_code, 2) << zero.out;
  EXPECT_NE(zero.out.find("/dev/zero: is not a regular file"), std::string::npos) << zero.out;

  ASSERT_EQ(::mkfifo((dir_ / "fifo.toml").c_str(), 0600), 0);  // would block forever
  auto fifo = plugtrain("run fifo.toml");
  EXPECT_EQ(fifo.exit_code, 2) << fifo.out;
  EXPECT_NE(fifo.out.find("fifo.toml: is not a regular file"), std::string::npos) << fifo.out;

  auto missing = plugtrain("run nope.toml");
  EXPECT_EQ(missing.exit_code, 2) << missing.out;
  EXPECT_NE(missing.out.find("nope.toml: no such experiment file"), std::string::npos) << missing.out;

  if (::geteuid() != 0) {  // root reads any file
    fs::permissions(dir_ / "exp.toml", fs::perms::none);
    auto denied = plugtrain("run exp.toml");
    EXPECT_NE(denied.out.find("Permission denied"), std::string::npos) << denied.out;
  }
}

TEST_F(BadInputTest, RunNamesStayInsideTheOutputFolder) {
  for (const std::string name : {"../x", "/tmp/abs", "", ".", "..", "a/b"}) {
    auto r = run_with("experiment.name=\"" + name + "\"");
    EXPECT_EQ(r.exit_code, 2) << name << ": " << r.out;
    EXPECT_NE(r.out.find("experiment.name must"), std::string::npos) << name << ": " << r.out;
  }
  EXPECT_FALSE(fs::exists(dir_ / "runs"));
  EXPECT_FALSE(fs::exists(dir_ / "x"));
}

TEST_F(BadInputTest, NumbersMustBeFiniteAndWithinWhatTheMachineHas) {
  for (const std::string value : {"inf", "nan", "-inf"}) {
    auto r = run_with("optim.lr=" + value);
    EXPECT_EQ(r.exit_code, 2) << value << ": " << r.out;
    EXPECT_NE(r.out.find("optim.lr must be a finite number"), std::string::npos) << r.out;
  }
  auto threads = run_with("train.threads=100000");
  EXPECT_EQ(threads.exit_code, 2) << threads.out;
  EXPECT_NE(threads.out.find("train.threads = 100000 is more than 4 per core"), std::string::npos) << threads.out;
  auto devices = plugtrain("run exp.toml --no-gpu --set backend.devices=300");
  EXPECT_EQ(devices.exit_code, 2) << devices.out;
  EXPECT_NE(devices.out.find("backend.devices = 300 but cpu runs at most"), std::string::npos) << devices.out;
  EXPECT_FALSE(fs::exists(dir_ / "runs"));
}

}  // namespace bad_input_test
}  // namespace plugtrain
