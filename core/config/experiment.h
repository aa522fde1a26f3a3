// A validated experiment: what the user wrote, typed, with defaults filled in, one struct per
// TOML table. Produced once from the TOML file and --set overrides (run/validate.h) and never
// changed afterwards: what a run decides from it (backend, devices, per-device batch, learning
// rate) is the RunPlan's. Nothing downstream reads TOML or compares a configuration word:
// choices are enums (config/choices.h) and "auto" is std::nullopt. Every key's type, default,
// check and documentation is declared once, in config/experiment_schema.cpp.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "config/choices.h"
#include "plugtrain/options.h"

namespace plugtrain {

struct ExperimentConfig {  // [experiment]
  std::string name = "experiment";
  std::int64_t seed = 0;
  std::string output = "runs";
};

struct BackendConfig {  // [backend]
  std::optional<std::string> name;  // nullopt: "auto", chosen by `select`
  BackendSelect select = BackendSelect::priority;
  std::vector<std::string> prefer;  // empty: every loaded backend, by the priority its plugin declares
  std::vector<std::string> disable;
  std::vector<std::string> force;   // chosen automatically even where their probe advises against it
  std::optional<std::int64_t> devices = 1;  // nullopt: "auto", every device the backend has
  std::optional<RunStrategy> strategy;      // nullopt: "auto"
};

struct PluginsConfig {  // [plugins]
  std::vector<std::string> paths;
};

struct ModelConfig {  // [model]: its name; the model's own options are checked against its schema
  std::string name;
  std::string init;  // a Python state_dict (torch.save) to start from
  Options options;
};

struct TaskConfig {  // [task]: its name; the task's own options are checked against its schema
  std::string name = "classification";
  Options options;
};

struct AugmentConfig {  // the [data] keys of the augmentations
  std::vector<Augmentation> order;
  std::int64_t crop_padding = 4;
  PaddingMode crop_padding_mode = PaddingMode::constant;
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
};

struct DataConfig {  // [data]
  std::string dataset_name = "fashion-mnist";  // as written; data.dataset
  // The data set's own options: the [dataset] table, checked against the schema of the data set
  // a plugin registers under dataset_name (the bundled ones too) by run/validate.
  Options dataset_options;
  std::string path = "/usr/share/datasets/fashion-mnist";
  std::optional<std::int64_t> batch_size = 100;  // per device (per rank); nullopt: "auto", the plan searches
  std::int64_t max_batch_size = 4096;            // "auto" tries no larger batch
  std::int64_t min_batch_size = 1;               // out-of-memory halving (and "auto") go no lower
  double memory_headroom = 0.1;                  // "auto": share of the device's memory left free
  std::int64_t global_batch_size = 0;            // 0: batch_size x devices
  std::int64_t test_batch_size = 1000;
  CifarLabels label = CifarLabels::fine;
  std::int64_t image_size = 0;                   // image-folder, tiny-imagenet: side of the square samples (0: 64)
  std::optional<ImageCache> cache;               // nullopt: "auto"
  std::optional<bool> on_device;                 // nullopt: "auto"
  std::optional<std::int64_t> workers;           // loader threads; nullopt: "auto", the backend's
  std::optional<std::int64_t> prefetch;          // batches prepared ahead; nullopt: "auto", the backend's
  bool skip_bad = false;                         // skip (and count) images that cannot be decoded
  bool shuffle = true;                           // false: every epoch takes the training samples in order
  Normalize normalize = Normalize::dataset;      // (or explicit mean/std)
  std::vector<double> mean;                      // explicit per-channel mean on the [0, 1] scale
  std::vector<double> std;                       // explicit per-channel std
  AugmentConfig augment;
  double label_noise = 0.0;
  std::int64_t train_subset = 0;
  double val_fraction = 0.0;                     // held out of the training set for model selection (0: none)
  std::int64_t test_subset = 0;
  std::vector<std::int64_t> synthetic_shape = {1, 28, 28};
  std::int64_t synthetic_classes = 10;
  std::int64_t synthetic_train_size = 2000;
  std::int64_t synthetic_test_size = 500;
  // Mixup and CutMix on the training batches (timm's Mixup): 0 alpha turns each off.
  double mixup_alpha = 0.0;
  double cutmix_alpha = 0.0;
  double mixup_prob = 1.0;          // share of batches mixed at all
  double mixup_switch_prob = 0.5;   // with both on: share of mixed batches that use CutMix
};

struct OptimConfig {  // [optim]
  OptimizerName name = OptimizerName::adam;
  std::optional<OptimizerImpl> impl;  // nullopt: "auto" (train/optimizer_table.h)
  double lr = 1e-3;
  double momentum = 0.0;
  bool nesterov = false;
  double weight_decay = 0.0;
  DecayScope decay = DecayScope::all;  // which parameters weight_decay applies to
  std::vector<double> betas;  // empty: the optimizer's own default
  double eps = 1e-8;
  double alpha = 0.99;
  LrScaling lr_scaling = LrScaling::none;  // lr x f(global batch / reference batch)
  std::int64_t lr_batch_size = 0;          // the reference batch optim.lr is meant for (0: batch_size)
};

struct ScheduleConfig {  // [schedule]
  ScheduleName name = ScheduleName::none;
  std::int64_t step_size = 10;
  double gamma = 0.1;
  std::vector<std::int64_t> milestones;
  std::int64_t warmup_epochs = 0;
  std::int64_t warmup_steps = 0;     // instead of warmup_epochs: in optimizer steps
  double min_lr = 0.0;
  double pct_start = 0.3;            // onecycle: share of the steps spent rising
  double div_factor = 25;            // onecycle: the first lr is lr / div_factor
  double final_div_factor = 1e4;     // onecycle: the last lr is the first / final_div_factor
};

struct CheckpointConfig {  // [checkpoint]
  std::string folder;  // empty: <run folder>/checkpoints
  CheckpointSave save = CheckpointSave::last;
  std::int64_t every_n_epochs = 1;
  std::optional<std::string> monitor;  // nullopt: "auto", the task's headline test metric
  std::optional<Direction> mode;  // nullopt: "auto", by the metric
  std::int64_t keep_last = 3;
};

struct EarlyStoppingConfig {  // [early_stopping]
  std::optional<std::string> monitor;  // nullopt: "auto", the task's headline test metric
  std::optional<Direction> mode;  // nullopt: "auto", by the metric
  std::int64_t patience = 0;      // 0: off
  double min_delta = 0.0;
};

struct DistributedConfig {  // [distributed]
  double timeout = 120;          // seconds a collective (or the rendezvous) may wait
  std::optional<std::string> interface;  // the ranks' network interface(s); nullopt: "auto"
  std::int64_t bucket_mb = 25;   // DDP gradient bucket size
  std::optional<ShardLevel> shard;             // fsdp's; nullopt: "auto" (full)
  ShardDtype param_dtype = ShardDtype::fp32;   // fsdp: the gathered parameters' type
  ShardDtype reduce_dtype = ShardDtype::fp32;  // fsdp: the gradients' sum's
};

struct TrainConfig {  // [train]
  std::int64_t epochs = 10;
  std::int64_t max_steps = 0;
  std::int64_t steps_per_epoch = 0;  // batches an epoch takes of its shuffled data (0: all)
  std::int64_t log_interval = 100;
  std::int64_t eval_every = 1;
  std::int64_t test_every = 0;  // with a validation split: test every N epochs too (0: once, at the end)
  std::int64_t accumulate_steps = 1;  // micro-batches per optimizer step
  double ema_decay = 0.0;             // EMA of the weights (0: off)
  bool ema_warmup = true;             // timm ModelEmaV3's warm-up of the decay
  bool ema_evaluate = true;           // evaluate (and select) with the EMA weights
  std::int64_t swa_start = 0;         // stochastic weight averaging from this epoch on (0: off)
  double swa_lr = 0.0;                // its constant learning rate (0: the schedule's)
  double grad_clip = 0.0;
  std::int64_t threads = 0;
  PrecisionMode precision = PrecisionMode::fp32;
  bool phase_timing = true;  // the per-epoch split of step time into data, copy, fwd, bwd, opt, other
  OnNonfinite on_nonfinite = OnNonfinite::stop;
  bool profile = false;      // LibTorch's profiler over profile_steps steps after profile_warmup
  std::int64_t profile_steps = 20;
  std::int64_t profile_warmup = 5;
  std::optional<bool> tf32;  // CUDA TF32; nullopt: "default" (PyTorch's)
  bool cudnn_benchmark = true;
  bool deterministic = false;  // LibTorch's deterministic algorithms (warn-only), cuDNN's too, no autotuner
  bool keep_host_memory = true;  // a run on the host CPU: freed memory stays in the heap (process/host_heap.h)
  std::optional<MemoryFormatChoice> memory_format;  // nullopt: "auto"
  std::optional<bool> graphs;                       // replay whole steps from a device graph; nullopt: "auto"
  ActivationCheckpointing activation_checkpointing = ActivationCheckpointing::none;
};

struct LoggingConfig {  // [logging]
  // The loggers on (logger.h): this list, then each logger with a [logging.<name>] table (run/
  // validate adds those, and mlflow where MLFLOW_TRACKING_URI is set). Each one's options, checked
  // against its schema, in `options`.
  std::vector<std::string> loggers{"tensorboard"};
  std::map<std::string, Options> options;
};

struct Experiment {
  std::string source;  // the experiment file, for messages

  ExperimentConfig experiment;
  BackendConfig backend;
  PluginsConfig plugins;
  ModelConfig model;
  TaskConfig task;
  DataConfig data;
  OptimConfig optim;
  ScheduleConfig schedule;
  CheckpointConfig checkpoint;
  EarlyStoppingConfig early_stopping;
  DistributedConfig distributed;
  TrainConfig train;
  LoggingConfig logging;
};

}  // namespace plugtrain
