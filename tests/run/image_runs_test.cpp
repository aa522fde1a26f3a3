// Training on the image data sets end to end, through the real executable, on files written
// in their real formats (support/image_data.h): each format trains well above chance, every
// shipped image example runs as shipped (only data.path and the length changed), `plugtrain
// data` describes a data set and draws its grid, and bad data stops a run with one line.
// ctest-label: e2e
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "data/image_codec.h"
#include "support/experiment_folder.h"
#include "support/experiment_toml.h"
#include "support/image_data.h"
#include "support/run_folder.h"

namespace plugtrain::testing {
namespace image_runs_test {

namespace fs = std::filesystem;

class ImageRunTest : public ExperimentFolderTest {
 protected:
  ImageRunTest() : ExperimentFolderTest("image_runs", "") {}

  nlohmann::json summary(const std::string& name) const { return testing::run_summary(dir_, name, 0); }

  // A small, fast network and recipe over the given [data] keys; trains `epochs` epochs.
  void write_small_run(const std::string& name, const std::vector<std::pair<std::string, testing::TomlValue>>& data,
                       int epochs = 4) const {
    write_experiment(testing::ExperimentToml(name)
                         .set("experiment.seed", 1)
                         .on_cpu()
                         .set("model.name", "baseline_cnn")
                         .set("model.channels", {16, 32})
                         .set("data.batch_size", 32)
                         .set("data.test_batch_size", 100)
                         .set_keys("data", data)
                         .set("optim.name", "adam")
                         .set("optim.lr", 0.003)
                         .set("train.epochs", epochs)
                         .set("train.log_interval", 0)
                         .text());
  }

  void expect_learns(const std::string& name, double accuracy) const {
    const ProcessResult r = plugtrain("run exp.toml");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    const double got = summary(name)["final_test_accuracy"].get<double>();
    EXPECT_GE(got, accuracy) << r.out;
  }
};

TEST_F(ImageRunTest, Cifar10FromItsTarGzTrainsWellAboveChance) {
  write_cifar10(dir_ / "cifar-10-batches-bin", 100, 200);
  const std::string cmd = "tar -czf " + shell_quote((dir_ / "cifar-10-binary.tar.gz").string()) + " -C " +
                          shell_quote(dir_.string()) + " cifar-10-batches-bin";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  fs::remove_all(dir_ / "cifar-10-batches-bin");  // only the archive is left
  write_small_run("c10", {{"dataset", "cifar10"},
                          {"path", "cifar-10-binary.tar.gz"},
                          {"augmentation", {"random_crop", "horizontal_flip"}}});
  expect_learns("c10", 0.6);  // 10 classes: chance is 0.1
}

TEST_F(ImageRunTest, ChannelsLastOnRequestTrainsAndSaysSo) {
  write_cifar10(dir_ / "c10", 40, 100);
  write_small_run("cl", {{"dataset", "cifar10"}, {"path", "c10"}}, 2);
  const ProcessResult r = plugtrain("run exp.toml --set train.memory_format='\"channels_last\"'");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("device: memory format channels-last (train.memory_format)"), std::string::npos) << r.out;
  EXPECT_GE(summary("cl")["final_test_accuracy"].get<double>(), 0.5) << r.out;
  const ProcessResult automatic = plugtrain("run exp.toml --set train.epochs=1");
  EXPECT_NE(automatic.out.find("device: memory format channels-last (auto: a model with 2-d convolutions)"),
            std::string::npos)
      << automatic.out;
  const ProcessResult plain = plugtrain("run exp.toml --set train.epochs=1 --set train.memory_format='\"contiguous\"'");
  EXPECT_NE(plain.out.find("device: memory format contiguous (train.memory_format)"), std::string::npos) << plain.out;
  const ProcessResult bad = plugtrain("run exp.toml --set train.tf32='\"yes\"'");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.out.find("train.tf32 must be a boolean or \"default\", got string"), std::string::npos) << bad.out;
}

// data.normalize = Normalize::dataset: the statistics are stored beside the run when it begins, and a
// resume normalises with them, not with what the (possibly changed) files would give now.
TEST_F(ImageRunTest, TheNormalisationIsStoredBesideTheRunAndAResumeUsesIt) {
  write_cifar10(dir_ / "c10", 40, 100);
  write_small_run("norm", {{"dataset", "cifar10"}, {"path", "c10"}}, 1);
  ProcessResult r = plugtrain("run exp.toml");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const fs::path stored = dir_ / "runs" / "norm" / "version_0" / "normalization.json";
  ASSERT_TRUE(fs::exists(stored)) << r.out;
  nlohmann::json n = nlohmann::json::parse(slurp(stored));
  ASSERT_EQ(n["mean"].size(), 3u);
  ASSERT_EQ(n["std"].size(), 3u);
  // As if the files had changed since: the resumed run keeps what the run began with.
  n["mean"] = {0.25, 0.5, 0.75};
  std::ofstream(stored) << n.dump();
  r = plugtrain("run exp.toml --resume last --set train.epochs=2");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("normalize: training set mean 0.2500, 0.5000, 0.7500"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("normalization.json when the run began)"), std::string::npos) << r.out;
  std::ofstream(stored) << "{\"mean\": [0.1]";
  r = plugtrain("run exp.toml --resume last --set train.epochs=3");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.out.find("normalization.json: not the statistics a run stores"), std::string::npos) << r.out;
}

TEST_F(ImageRunTest, Cifar100CoarseLabelsTrain) {
  write_cifar100(dir_ / "c100", 1000, 200);
  write_small_run("c100", {{"dataset", "cifar100"}, {"path", "c100"}, {"label", "coarse"}}, 3);
  expect_learns("c100", 0.15);  // 20 superclasses of 5 colours each, 50 images each: chance is 0.05
}

TEST_F(ImageRunTest, JpegAndPngImageFolderTrainsWithWorkerThreads) {
  write_image_folder(dir_ / "images", 4, 40, 10, 40, 30);
  write_small_run("folder", {{"dataset", "image-folder"},
                             {"path", "images"},
                             {"image_size", 24},
                             {"workers", 2},
                             {"augmentation", {"random_resized_crop", "horizontal_flip", "color_jitter"}},
                             {"resized_crop_scale", {0.5, 1.0}}});
  expect_learns("folder", 0.7);  // 4 classes: chance is 0.25
}

TEST_F(ImageRunTest, TinyImageNetDecodedEveryEpochTrains) {
  write_tiny_imagenet(dir_ / "tiny", 5, 24, 6);
  write_small_run("tiny", {{"dataset", "tiny-imagenet"},
                           {"path", "tiny"},
                           {"image_size", 32},
                           {"cache", "none"},
                           {"workers", 2},
                           {"augmentation", {"random_crop", "horizontal_flip", "random_erasing"}}});
  const ProcessResult r = plugtrain("run exp.toml");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("120 training and 30 val samples, 5 classes"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("the loader decodes every epoch"), std::string::npos) << r.out;
  // Its val split chooses the model; its test images have no labels, so val also gives the final figures.
  EXPECT_NE(r.out.find("data: validation split: the data set's own val split (30 samples)"), std::string::npos)
      << r.out;
  const nlohmann::json s = summary("tiny");
  EXPECT_EQ(s["selection_split"], "val");
  EXPECT_GE(s["final_val_accuracy"].get<double>(), 0.7) << r.out;
  EXPECT_DOUBLE_EQ(s["final_test_accuracy"].get<double>(), s["final_val_accuracy"].get<double>());
}

// Every shipped image example, with only its data path pointed at generated files and its
// length cut to two steps on small batches: the files run as shipped.
TEST_F(ImageRunTest, EveryShippedImageExampleRuns) {
  write_cifar10(dir_ / "cifar-10-batches-bin", 8, 16);
  write_cifar100(dir_ / "cifar-100-binary", 40, 16);
  write_tiny_imagenet(dir_ / "tiny-imagenet-200", 4, 4, 2);
  const std::string shorter =
      " --set train.max_steps=2 --set data.batch_size=4 --set data.test_batch_size=16 --set data.test_subset=16"
      " --set experiment.output='\"runs\"' --set backend.name='\"cpu\"'";
  const std::string examples = std::string(PLUGTRAIN_SOURCE_DIR) + "/examples/";
  struct Example {
    std::string file, data, command;
  };
  const std::vector<Example> cases = {
      {"cifar10_resnet18.toml", "cifar-10-batches-bin", "run"},
      {"cifar100_resnet18.toml", "cifar-100-binary", "run"},
      {"cifar10_vit.toml", "cifar-10-batches-bin", "run"},
      {"tiny_imagenet_baseline.toml", "tiny-imagenet-200", "run"},
      {"tiny_imagenet_residual.toml", "tiny-imagenet-200", "run"},
      {"tiny_imagenet_deeper_wider.toml", "tiny-imagenet-200", "run"},
      {"tiny_imagenet_se.toml", "tiny-imagenet-200", "run"},
      {"tiny_imagenet_best.toml", "tiny-imagenet-200", "run"},
      {"cifar10_lion_label_noise.toml", "cifar-10-batches-bin", "sweep --jobs 2"},
      {"tiny_imagenet_augmentation.toml", "tiny-imagenet-200", "sweep --jobs 2"},
  };
  for (const Example& c : cases) {
    const ProcessResult r =
        plugtrain(c.command + " " + shell_quote(examples + c.file) + " --set data.path='\"" + c.data + "\"'" + shorter);
    EXPECT_EQ(r.exit_code, 0) << c.file << "\n" << r.out;
    if (c.command == "run") EXPECT_NE(r.out.find("done:"), std::string::npos) << c.file << "\n" << r.out;
  }
}

TEST_F(ImageRunTest, DataCommandDescribesTheSetAndDrawsTheGrid) {
  write_tiny_imagenet(dir_ / "tiny", 3, 4, 2);
  write_experiment(R"([model]
name = "baseline_cnn"
[data]
dataset = "tiny-imagenet"
path = "tiny"
image_size = 48
augmentation = ["random_resized_crop", "horizontal_flip", "color_jitter"]
)");
  const ProcessResult r = plugtrain("data exp.toml --grid grid.png --samples 6 --columns 3");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("splits: train 12 (4 per class), val 6 (2 per class; validates), no labelled test split"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("classes: 3: 0 thing 0, 1 thing 1, 2 thing 2"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("sample: 3x48x48 (C x H x W), uint8 pixels"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("normalize: training set mean "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("augmentation: random_resized_crop (scale 0.08-1.00"), std::string::npos) << r.out;
  const std::string png = slurp(dir_ / "grid.png");
  const data::Image grid = data::decode_image(reinterpret_cast<const uint8_t*>(png.data()), png.size(), "grid.png");
  // 3 columns of 48-pixel cells with 4-pixel gaps; 2 rows, each with a 14-pixel label line.
  EXPECT_EQ(grid.width, 3 * (48 + 4) + 4);
  EXPECT_EQ(grid.height, 2 * (48 + 14 + 4) + 4);
}

TEST_F(ImageRunTest, BadDataStopsTheRunWithOneLineNamingTheFile) {
  write_cifar10(dir_ / "c10", 8, 8);
  fs::remove(dir_ / "c10" / "data_batch_5.bin");
  write_small_run("bad", {{"dataset", "cifar10"}, {"path", "c10"}});
  ProcessResult r = plugtrain("run exp.toml");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.out.find("plugtrain: error: data set 'cifar10' (plugin 'datasets'): c10/data_batch_5.bin: missing"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("terminate"), std::string::npos) << r.out;

  write_image_folder(dir_ / "images", 2, 3, 1);
  std::ofstream(dir_ / "images" / "train" / "class_1" / "broken.jpg") << "\xff\xd8\xff truncated";
  write_small_run("bad", {{"dataset", "image-folder"}, {"path", "images"}, {"image_size", 16}}, 1);
  r = plugtrain("run exp.toml");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(
      r.out.find("plugtrain: error: data set 'image-folder' (plugin 'datasets'): images/train/class_1/broken.jpg: "),
      std::string::npos)
      << r.out;
  write_small_run("skip", {{"dataset", "image-folder"}, {"path", "images"}, {"image_size", 16}, {"skip_bad", true}}, 1);
  r = plugtrain("run exp.toml");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("data: skipped 1 images that cannot be decoded (data.skip_bad); the first: "
                       "images/train/class_1/broken.jpg"),
            std::string::npos)
      << r.out;
}

#ifdef PLUGTRAIN_PYTHON
// The zoo's state_dicts are torchvision's: a torchvision.models.resnet18 state_dict starts a
// run through [model] init, and the run's exported weights load back into torchvision with
// strict=True, every parameter where it was (the one step has a learning rate of 1e-30).
TEST_F(ImageRunTest, TorchvisionWeightsGoInAndComeBackOut) {
  const std::string python = PLUGTRAIN_PYTHON;
  if (run_process(python + " -c 'import torchvision'").exit_code != 0)
    GTEST_SKIP() << "torchvision is not installed beside the torch wheel (scripts/setup installs it)";
  std::ofstream(dir_ / "tv.py") << R"(
import sys, torch, torchvision
torch.manual_seed(0)
if sys.argv[1] == "save":
    m = torchvision.models.resnet18(num_classes=10)
    for mod in m.modules():  # statistics a trained network would have, not the defaults
        if isinstance(mod, torch.nn.BatchNorm2d):
            mod.running_mean.uniform_(-0.5, 0.5); mod.running_var.uniform_(0.5, 1.5)
    torch.save(m.state_dict(), "tv.pt")
else:
    original = torch.load("tv.pt")
    exported = torch.load("exported.pt")
    m = torchvision.models.resnet18(num_classes=10)
    m.load_state_dict(exported, strict=True)
    worst = max((exported[k].double() - original[k].double()).abs().max().item()
                for k, _ in m.named_parameters())
    print("KEYS", len(exported), len(original), "UNCHANGED", worst < 1e-20)
    print("BATCHES", int(exported["bn1.num_batches_tracked"]) - int(original["bn1.num_batches_tracked"]))
)";
  ASSERT_EQ(run_process("cd " + shell_quote(dir_.string()) + " && " + python + " tv.py save").exit_code, 0);
  write_cifar10(dir_ / "c10", 8, 8);
  write_experiment(testing::ExperimentToml("tv")
                       .on_cpu()
                       .set_keys("model", {{"name", "resnet18"}, {"stem", "imagenet"}, {"init", "tv.pt"}})
                       .set_keys("data", {{"dataset", "cifar10"}, {"path", "c10"}, {"batch_size", 8}})
                       .set_keys("optim", {{"name", "sgd"}, {"lr", 1e-30}})
                       .set("train.max_steps", 1)
                       .text());
  const ProcessResult r = plugtrain("run exp.toml");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("model: initialised from tv.pt"), std::string::npos) << r.out;
  const ProcessResult e = plugtrain("export runs/tv/version_0/checkpoints/last.ckpt exported.pt");
  ASSERT_EQ(e.exit_code, 0) << e.out;
  const ProcessResult py = run_process("cd " + shell_quote(dir_.string()) + " && " + python + " tv.py check");
  ASSERT_EQ(py.exit_code, 0) << py.out;
  EXPECT_NE(py.out.find("KEYS 122 122 UNCHANGED True"), std::string::npos) << py.out;
  EXPECT_NE(py.out.find("BATCHES 1"), std::string::npos) << py.out;

  // The CIFAR stem has another conv1: torchvision's ImageNet weights do not fit it, and the
  // run says which tensor, before training.
  const ProcessResult wrong = plugtrain("run exp.toml --set model.stem='\"cifar\"'");
  EXPECT_EQ(wrong.exit_code, 1);
  EXPECT_NE(
      wrong.out.find("tv.pt: does not match the model: shape of conv1.weight: file [64, 3, 7, 7], model [64, 3, 3, 3]"),
      std::string::npos)
      << wrong.out;
}

// The zoo computes what torchvision computes: from the same weights on the same 20 CIFAR
// samples (one batch, so the loader's shuffle changes only the order of a sum), two SGD steps
// of plugtrain's resnet18 (BasicBlock; CIFAR form, channels-last) give the losses of
// torchvision's model in eager PyTorch within float rounding, one thread each: the second loss
// follows the first step's every gradient. (A third step on 20 samples that the network is
// memorising amplifies rounding: torchvision alone moves by 0.005 in it between 1 and 2 threads,
// plugtrain alone by 0.008 between memory formats.) resnet50 (Bottleneck, CIFAR form) and
// mobilenet_v2 (ImageNet form: ReLU6 in place) are held to their first loss, the forward pass
// with its in-place activations, and train that one step: on 20 samples resnet50's batch norms
// make later losses so sensitive to rounding that torchvision alone, contiguous against
// channels-last or 2 threads against 1, differs by 0.01 in the second and 0.07 in the third.
// A backward pass that an in-place operation corrupted cannot pass silently: autograd refuses
// it (a saved tensor's version changed).
TEST_F(ImageRunTest, ZooLossCurvesAreTorchvisionsWithinFloatRounding) {
  const std::string python = PLUGTRAIN_PYTHON;
  if (run_process(python + " -c 'import torchvision'").exit_code != 0)
    GTEST_SKIP() << "torchvision is not installed beside the torch wheel (scripts/setup installs it)";
  write_cifar10(dir_ / "c10", 4, 8);
  std::ofstream(dir_ / "curve.py") << R"(
import sys, torch, torchvision
torch.manual_seed(0)
torch.set_num_threads(1)  # as the run's train.threads: the same order of every sum
action = sys.argv[1]
def build(name):
    m = getattr(torchvision.models, name)(num_classes=10)
    if name.startswith("resnet"):  # the CIFAR form
        m.conv1 = torch.nn.Conv2d(3, 64, 3, 1, 1, bias=False)
        m.maxpool = torch.nn.Identity()
    else:  # mobilenet_v2: no dropout (the run's model.dropout = 0), so no random masks to match
        m.classifier[0].p = 0.0
    return m
if action == "save":  # every model's weights, in one start of Python
    for name in sys.argv[2:]:
        torch.save(build(name).state_dict(), name + ".pt")
    sys.exit(0)
name, steps = sys.argv[2], int(sys.argv[3])
m = build(name)
m.load_state_dict(torch.load(name + ".pt"))
m = m.to(memory_format=torch.channels_last)  # as plugtrain's default for convolutional models
records = b"".join(open("c10/data_batch_%d.bin" % b, "rb").read() for b in range(1, 6))
raw = torch.frombuffer(bytearray(records), dtype=torch.uint8).reshape(-1, 3073)
y = raw[:, 0].long()
x = ((raw[:, 1:].float().reshape(-1, 3, 32, 32) / 255 - 0.5) / 0.25).contiguous(memory_format=torch.channels_last)
opt = torch.optim.SGD(m.parameters(), lr=0.01, momentum=0.9)
m.train()
for _ in range(steps):
    opt.zero_grad()
    loss = torch.nn.functional.cross_entropy(m(x), y)
    print("LOSS %.4f" % loss.item())
    loss.backward()
    opt.step()
)";
  const std::string curve = "cd " + shell_quote(dir_.string()) + " && " + python + " curve.py ";
  ASSERT_EQ(run_process(curve + "save resnet18 resnet50 mobilenet_v2").exit_code, 0);
  for (const std::string model : {"resnet18", "resnet50", "mobilenet_v2"}) {
    const std::size_t steps = model == "resnet18" ? 2 : 1;
    testing::ExperimentToml experiment(model);
    experiment.set("experiment.seed", 1)
        .on_cpu()
        .set_keys("model",
                  {{"name", model}, {"stem", model == "mobilenet_v2" ? "imagenet" : "cifar"}, {"init", model + ".pt"}});
    if (model == "mobilenet_v2") experiment.set("model.dropout", 0.0);
    experiment
        .set_keys("data", {{"dataset", "cifar10"},
                           {"path", "c10"},
                           {"batch_size", 20},
                           {"mean", {0.5, 0.5, 0.5}},
                           {"std", {0.25, 0.25, 0.25}}})
        .set_keys("optim", {{"name", "sgd"}, {"lr", 0.01}, {"momentum", 0.9}})
        .set_keys("train", {{"epochs", steps}, {"log_interval", 1}, {"threads", 1}});
    write_experiment(experiment.text());
    const ProcessResult ours = plugtrain("run exp.toml");
    ASSERT_EQ(ours.exit_code, 0) << ours.out;
    const ProcessResult theirs = run_process(curve + "curve " + model + " " + std::to_string(steps));
    ASSERT_EQ(theirs.exit_code, 0) << theirs.out;
    std::vector<double> our_losses, their_losses;
    for (std::size_t at = 0; (at = ours.out.find("  loss ", at)) != std::string::npos; at += 7)
      our_losses.push_back(std::stod(ours.out.substr(at + 7)));
    for (std::size_t at = 0; (at = theirs.out.find("LOSS ", at)) != std::string::npos; at += 5)
      their_losses.push_back(std::stod(theirs.out.substr(at + 5)));
    ASSERT_EQ(our_losses.size(), steps) << ours.out;
    ASSERT_EQ(their_losses.size(), steps) << theirs.out;
    for (std::size_t i = 0; i < steps; ++i)
      EXPECT_NEAR(our_losses[i], their_losses[i], 2e-3 * std::max(1.0, their_losses[i]))
          << model << " step " << i + 1 << "\n"
          << ours.out << theirs.out;
    if (steps > 1)
      EXPECT_GT(std::abs(their_losses[1] - their_losses[0]), 1e-2) << model << ": the step moved the weights";
  }
}
#endif

}  // namespace image_runs_test
}  // namespace plugtrain::testing
