// A validated experiment: what the user wrote, typed, with defaults filled in. Produced once
// from the TOML file and --set overrides (run/validate.h) and never changed afterwards: what a
// run decides from it (backend, devices, per-device batch, learning rate) is the RunPlan's.
// Nothing downstream reads TOML.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "plugtrain/options.h"

namespace plugtrain {

struct Experiment {
  std::string source;  // the experiment file, for messages

  // [experiment]
  std::string name = "experiment";
  std::int64_t seed = 0;
  std::string output = "runs";

  // [backend]
  std::string backend = "auto";
  std::string select = "priority";  // "auto" chooses by: priority (prefer order) or fastest (measured)
  std::vector<std::string> prefer;  // empty: every loaded backend, by the priority its plugin declares
  std::vector<std::string> disable;
  std::vector<std::string> force;   // chosen automatically even where their probe advises against it
  std::int64_t devices = 1;         // 0: "auto", every device the backend has
  std::string strategy = "auto";   // auto, single, dp, ddp

  // [plugins]
  std::vector<std::string> plugin_paths;

  // [model] — name here; the model's own options are checked against its schema
  std::string model;
  std::string model_init;  // a Python state_dict (torch.save) to start from
  Options model_options;

  // [data]
  std::string dataset = "fashion-mnist";
  std::string data_path = "/usr/share/datasets/fashion-mnist";
  std::int64_t batch_size = 100;         // per device (per rank); 0: "auto", the plan searches for it
  std::int64_t max_batch_size = 4096;    // "auto" tries no larger batch
  std::int64_t min_batch_size = 1;       // out-of-memory halving (and "auto") go no lower
  double memory_headroom = 0.1;          // "auto": share of the device's memory left free
  std::int64_t global_batch_size = 0;    // 0: batch_size x devices
  std::int64_t test_batch_size = 1000;
  std::string data_label = "fine";        // cifar100: fine (100 classes) or coarse (20)
  std::int64_t image_size = 0;           // image-folder, tiny-imagenet: side of the square samples (0: 64)
  std::string data_cache = "auto";       // auto, memory, none: keep decoded images in memory
  std::string on_device = "auto";        // data.on_device: auto, true, false
  std::int64_t data_workers = -1;        // loader threads (-1: "auto", the backend's)
  std::int64_t data_prefetch = -1;       // batches prepared ahead (-1: "auto", the backend's)
  bool skip_bad = false;                 // skip (and count) images that cannot be decoded
  std::string normalize = "dataset";     // dataset, none (or explicit mean/std)
  std::vector<double> data_mean;         // explicit per-channel mean on the [0, 1] scale
  std::vector<double> data_std;          // explicit per-channel std
  std::vector<std::string> augmentation;
  std::int64_t crop_padding = 4;
  std::string crop_padding_mode = "constant";
  double flip_p = 0.5;
  std::vector<double> resized_crop_scale = {0.08, 1.0};
  std::vector<double> resized_crop_ratio = {0.75, 4.0 / 3.0};
  double rotation_degrees = 15;
  std::vector<double> translate = {0.1, 0.1};
  double jitter_brightness = 0.4;
  double jitter_contrast = 0.4;
  double jitter_saturation = 0.4;
  double erasing_p = 0.5;
  std::vector<double> erasing_scale = {0.02, 0.33};
  std::vector<double> erasing_ratio = {0.3, 3.3};
  double label_noise = 0.0;
  std::int64_t train_subset = 0;
  std::int64_t test_subset = 0;
  std::vector<std::int64_t> synthetic_shape = {1, 28, 28};
  std::int64_t synthetic_classes = 10;
  std::int64_t synthetic_train_size = 2000;
  std::int64_t synthetic_test_size = 500;

  std::string tf32 = "default";          // CUDA TF32: default, true, false
  bool cudnn_benchmark = true;
  std::string memory_format = "auto";    // auto, channels_last, contiguous
  std::string graphs = "auto";           // replay whole steps from a device graph: auto, true, false

  // [optim]
  std::string optimizer = "adam";
  std::string optimizer_impl = "auto";  // auto, fused, foreach, loop (train/fused_optimizers.h)
  double lr = 1e-3;
  double momentum = 0.0;
  bool nesterov = false;
  double weight_decay = 0.0;
  std::vector<double> betas;  // empty: the optimizer's own default
  double eps = 1e-8;
  double alpha = 0.99;
  std::string lr_scaling = "none";  // none, linear, sqrt: lr x f(global batch / reference batch)
  std::int64_t lr_batch_size = 0;   // the reference batch optim.lr is meant for (0: batch_size)

  // [schedule]
  std::string schedule = "none";
  std::int64_t step_size = 10;
  double gamma = 0.1;
  std::vector<std::int64_t> milestones;
  std::int64_t warmup_epochs = 0;
  double min_lr = 0.0;

  // [checkpoint]
  std::string checkpoint_folder;  // empty: <run folder>/checkpoints
  std::string checkpoint_save = "last";
  std::int64_t checkpoint_every = 1;
  std::string checkpoint_monitor = "test_accuracy";
  std::string checkpoint_mode = "auto";
  std::int64_t checkpoint_keep_last = 3;

  // [early_stopping]
  std::string early_stopping_monitor = "test_accuracy";
  std::string early_stopping_mode = "auto";
  std::int64_t early_stopping_patience = 0;
  double early_stopping_min_delta = 0.0;

  // [distributed]
  double distributed_timeout = 120;  // seconds a collective (or the rendezvous) may wait
  std::int64_t bucket_mb = 25;       // DDP gradient bucket size

  // [train]
  std::int64_t epochs = 10;
  std::int64_t max_steps = 0;
  std::int64_t log_interval = 100;
  std::int64_t eval_every = 1;
  double grad_clip = 0.0;
  std::int64_t threads = 0;
  std::string precision = "fp32";
  bool phase_timing = true;
  std::string on_nonfinite = "stop";  // a non-finite loss: "stop" the run, or "skip_step" (fp32, bf16)
  bool profile = false;               // LibTorch's profiler over profile_steps steps after profile_warmup
  std::int64_t profile_steps = 20;
  std::int64_t profile_warmup = 5;  // the per-epoch split of step time into data, copy, fwd, bwd, opt, other
};

}  // namespace plugtrain
