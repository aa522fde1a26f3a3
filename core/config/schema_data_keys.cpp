// The keys of [data]: the data set, batches, normalisation, augmentation, mixing, label noise.
#include "config/experiment_schema_parts.h"

#include "config/schema_keys.h"

namespace plugtrain {

std::vector<ConfigKey> data_keys() {
  using namespace schema;
  using E = Experiment;
  return {
      key("data.dataset", field(&E::data, &DataConfig::dataset_name),
          "a data set a plugin registers, the bundled datasets plugin's included: fashion-mnist, mnist (IDX files), "
          "cifar10, cifar100 (binary version), image-folder, tiny-imagenet, synthetic (`plugtrain data --list`; its "
          "options are the [dataset] table)"),
      resumable(key("data.path", field(&E::data, &DataConfig::path),
                    "the data set's folder (cifar10/100: also the official .tar.gz archive itself)")),
      choice_key<CifarLabels>("data.label", field(&E::data, &DataConfig::label),
                              "cifar100: fine (100 classes) or coarse (20 superclasses); the same as [dataset] label"),
      key("data.image_size", field(&E::data, &DataConfig::image_size),
          "image-folder, tiny-imagenet: side of the square samples the images are resized to (0: 64)", at_least(0)),
      resumable(choice_or_auto_key<ImageCache>(
          "data.cache", field(&E::data, &DataConfig::cache),
          "image-folder, tiny-imagenet: keep decoded images in memory (memory), decode every epoch (none), "
          "or memory when they fit in half the free RAM (auto)")),
      resumable(count_zero_or_auto_key("data.workers", field(&E::data, &DataConfig::workers),
                                       "loader threads that decode and augment (0: the training thread; \"auto\": "
                                       "the backend's choice; decoding a cache up front uses every core)")),
      resumable(boolean_or_auto_key(
          "data.on_device", field(&E::data, &DataConfig::on_device),
          "keep the data set on the training device as bytes and shuffle, gather, crop, flip and normalise there "
          "(no copy per step): true, false, or \"auto\" (an accelerator, images in memory, only random_crop and "
          "horizontal_flip, and a quarter of its free memory holds them)")),
      resumable(count_zero_or_auto_key("data.prefetch", field(&E::data, &DataConfig::prefetch),
                                       "batches prepared ahead of the one training (\"auto\": the backend's)")),
      key("data.skip_bad", field(&E::data, &DataConfig::skip_bad),
          "skip images that cannot be decoded (and say how many) instead of stopping"),
      key("data.shuffle", field(&E::data, &DataConfig::shuffle),
          "draw each epoch's training batches in a new seeded order; false: every epoch takes the training "
          "samples in the data set's order (Lightning's DataLoader(shuffle=False)), for a run compared step by "
          "step with another framework's"),
      choice_key<Normalize>(
          "data.normalize", field(&E::data, &DataConfig::normalize),
          "dataset (per-channel mean and std of the training set, printed, and stored beside the run as "
          "normalization.json: a resume normalises with those) or none; data.mean and data.std set them explicitly"),
      key("data.mean", field(&E::data, &DataConfig::mean),
          "explicit per-channel mean on the [0, 1] pixel scale (with data.std)"),
      key("data.std", field(&E::data, &DataConfig::std),
          "explicit per-channel std on the [0, 1] pixel scale (with data.mean)"),
      count_or_auto_key("data.batch_size", field(&E::data, &DataConfig::batch_size),
                        "training batch size per device (per process), or \"auto\": the largest power of two whose "
                        "trial steps fit the device's memory"),
      resumable(key("data.max_batch_size", field(&E::data, &DataConfig::max_batch_size),
                    "\"auto\" batch: the largest size tried", greater_than(0))),
      resumable(key("data.min_batch_size", field(&E::data, &DataConfig::min_batch_size),
                    "the smallest batch an out-of-memory error may halve down to (and \"auto\" may choose)",
                    greater_than(0))),
      resumable(key("data.memory_headroom", field(&E::data, &DataConfig::memory_headroom),
                    "\"auto\" batch: the share of the device's memory left free", between(0, 0.9))),
      key("data.global_batch_size", field(&E::data, &DataConfig::global_batch_size),
          "samples per optimizer step over all devices (0: batch_size x devices); sets the per-device batch",
          at_least(0)),
      resumable(key("data.test_batch_size", field(&E::data, &DataConfig::test_batch_size), "evaluation batch size",
                    greater_than(0))),
      choice_list_key<Augmentation>(
          "data.augmentation", augment_field(&AugmentConfig::order),
          "applied in this order: any of random_crop, horizontal_flip, random_resized_crop, rotation, translate, "
          "color_jitter, random_erasing"),
      key("data.crop_padding", augment_field(&AugmentConfig::crop_padding),
          "random_crop: padding on each side, in pixels", at_least(0)),
      choice_key<PaddingMode>("data.crop_padding_mode", augment_field(&AugmentConfig::crop_padding_mode),
                              "random_crop: constant (black), reflect or edge"),
      key("data.flip_p", augment_field(&AugmentConfig::flip_p), "horizontal_flip: probability", between(0, 1)),
      key("data.resized_crop_scale", augment_field(&AugmentConfig::resized_crop_scale),
          "random_resized_crop: [lo, hi] share of the area", ordered_pair(1e-6, 1)),
      key("data.resized_crop_ratio", augment_field(&AugmentConfig::resized_crop_ratio),
          "random_resized_crop: [lo, hi] aspect ratio", ordered_pair(1e-6, 1e6)),
      key("data.rotation_degrees", augment_field(&AugmentConfig::rotation_degrees),
          "rotation: angle drawn from [-d, d]", between(0, 180)),
      key("data.translate", augment_field(&AugmentConfig::translate),
          "translate: [x, y] largest shift as a share of the width and height", ordered_pair(0, 1)),
      key("data.jitter_brightness", augment_field(&AugmentConfig::jitter_brightness),
          "color_jitter: brightness factor in [1-b, 1+b]", at_least(0)),
      key("data.jitter_contrast", augment_field(&AugmentConfig::jitter_contrast),
          "color_jitter: contrast factor in [1-c, 1+c]", at_least(0)),
      key("data.jitter_saturation", augment_field(&AugmentConfig::jitter_saturation),
          "color_jitter: saturation factor in [1-s, 1+s]", at_least(0)),
      key("data.erasing_p", augment_field(&AugmentConfig::erasing_p), "random_erasing: probability", between(0, 1)),
      key("data.erasing_scale", augment_field(&AugmentConfig::erasing_scale),
          "random_erasing: [lo, hi] share of the area", ordered_pair(1e-6, 0.999)),
      key("data.erasing_ratio", augment_field(&AugmentConfig::erasing_ratio), "random_erasing: [lo, hi] aspect ratio",
          ordered_pair(1e-6, 1e6)),
      key("data.label_noise", field(&E::data, &DataConfig::label_noise),
          "fraction of training labels replaced at random (seeded)", between(0, 1)),
      key("data.train_subset", field(&E::data, &DataConfig::train_subset),
          "use only the first N training samples (0: all)", at_least(0)),
      key("data.val_fraction", field(&E::data, &DataConfig::val_fraction),
          "share of the training set held out as the validation split (seeded by experiment.seed; the same on "
          "every rank and on resume): monitors, early stopping, best checkpoints and sweeps then choose by val_ "
          "metrics, and the test set is evaluated at the end (and every train.test_every epochs); 0: none, "
          "unless the data set has its own (tiny-imagenet's val): without a validation split the test set is "
          "evaluated every epoch and monitored",
          at_least_below(0, 1)),
      resumable(key("data.test_subset", field(&E::data, &DataConfig::test_subset),
                    "use only the first N test samples (0: all); a validation split is never cut", at_least(0))),
      key("data.synthetic_shape", field(&E::data, &DataConfig::synthetic_shape),
          "synthetic: sample shape [C, H, W]; the same as [dataset] shape", all_positive()),
      key("data.synthetic_classes", field(&E::data, &DataConfig::synthetic_classes),
          "synthetic: number of classes; the same as [dataset] classes", at_least(2)),
      key("data.synthetic_train_size", field(&E::data, &DataConfig::synthetic_train_size),
          "synthetic: training samples; the same as [dataset] train_size", greater_than(0)),
      key("data.synthetic_test_size", field(&E::data, &DataConfig::synthetic_test_size),
          "synthetic: test samples; the same as [dataset] test_size", greater_than(0)),
      key("data.mixup_alpha", field(&E::data, &DataConfig::mixup_alpha),
          "mixup (timm's): blend each training batch with itself reversed, lam ~ Beta(alpha, alpha), targets mixed "
          "the same way (classification only); 0: off",
          at_least(0)),
      key("data.cutmix_alpha", field(&E::data, &DataConfig::cutmix_alpha),
          "CutMix (timm's): paste a box of the reversed batch, lam ~ Beta(alpha, alpha) corrected to the box's area; "
          "0: off",
          at_least(0)),
      key("data.mixup_prob", field(&E::data, &DataConfig::mixup_prob),
          "share of training batches mixed (mixup or CutMix)", between(0, 1)),
      key("data.mixup_switch_prob", field(&E::data, &DataConfig::mixup_switch_prob),
          "with both mixup_alpha and cutmix_alpha: share of mixed batches that use CutMix", between(0, 1)),
  };
}

}  // namespace plugtrain
