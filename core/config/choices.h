// Every word an experiment key chooses from, as an enum and its TOML words in one table each.
// Validation turns the words into these values once; nothing outside core/config compares a
// configuration string (tests/config/config_words_test.cpp fails if code does). "auto" is never one
// of the enum's values: a key that may be "auto" holds std::optional<...> (nullopt: auto).
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "plugtrain/backend.h"  // Strategy: the SDK's, the words single, dp, ddp

namespace plugtrain {

enum class BackendSelect { priority, fastest };
// backend.strategy: the backend plans processes and devices (the SDK's Strategy); fsdp runs
// ddp's processes and shards the model's state over them (process_layout says which layout).
enum class RunStrategy { single, dp, ddp, fsdp };
// distributed.shard: what fsdp shards (DeepSpeed ZeRO's stages 1, 2 and 3).
enum class ShardLevel { optimizer, gradients, full };
// distributed.param_dtype and reduce_dtype: fsdp's gathered parameters and gradient sums.
enum class ShardDtype { fp32, bf16 };
// train.activation_checkpointing: none, or every unit the model declares (plugtrain/units.h).
enum class ActivationCheckpointing { none, blocks };
enum class CifarLabels { fine, coarse };
enum class ImageCache { memory, none };  // data.cache; "auto": memory when the images fit
enum class Normalize { dataset, none };
enum class Augmentation { random_crop, horizontal_flip, random_resized_crop, rotation, translate, color_jitter,
                          random_erasing };
enum class PaddingMode { constant, reflect, edge };
enum class MemoryFormatChoice { channels_last, contiguous };
enum class OptimizerName { sgd, adam, adamw, rmsprop, lion };
enum class OptimizerImpl { loop, foreach, fused };  // how an optimizer steps (train/optimizer_table.h)
enum class LrScaling { none, linear, sqrt };
// Which parameters optim.weight_decay applies to: all, or those of two or more dimensions
// (matrices, embeddings, kernels: nanoGPT's and timm's rule; no biases, no norm scales).
enum class DecayScope { all, matrices };
enum class ScheduleName { none, step, multistep, cosine, linear, onecycle };
enum class CheckpointSave { none, last, best, every };
enum class Direction { max, min };
enum class OnNonfinite { stop, skip_step };
enum class PrecisionMode { fp32, bf16, fp16 };
enum class SweepMethod { grid, random };
// `plugtrain run --resume`'s keywords (any other argument is a checkpoint's path).
enum class ResumeKeyword { last, automatic };
enum class Distribution { uniform, log_uniform, integer };
// [sweep] scheduler: every trial to its last epoch, or early stopping of trials at rungs.
enum class SweepScheduler { none, asha, hyperband };

// ChoiceWords<E>::words: each value with the word a file uses for it, in documentation order.
template <class E> struct ChoiceWords;

#define PLUGTRAIN_CHOICE_WORDS(E, ...)                                                         \
  template <> struct ChoiceWords<E> {                                                          \
    static constexpr std::pair<E, const char*> words[] = {__VA_ARGS__};                        \
  }
PLUGTRAIN_CHOICE_WORDS(ResumeKeyword, {ResumeKeyword::last, "last"}, {ResumeKeyword::automatic, "auto"});
PLUGTRAIN_CHOICE_WORDS(BackendSelect, {BackendSelect::priority, "priority"}, {BackendSelect::fastest, "fastest"});
PLUGTRAIN_CHOICE_WORDS(Strategy, {Strategy::single, "single"}, {Strategy::dp, "dp"}, {Strategy::ddp, "ddp"});
PLUGTRAIN_CHOICE_WORDS(RunStrategy, {RunStrategy::single, "single"}, {RunStrategy::dp, "dp"}, {RunStrategy::ddp, "ddp"},
                       {RunStrategy::fsdp, "fsdp"});
PLUGTRAIN_CHOICE_WORDS(ShardLevel, {ShardLevel::optimizer, "optimizer"}, {ShardLevel::gradients, "gradients"},
                       {ShardLevel::full, "full"});
PLUGTRAIN_CHOICE_WORDS(ShardDtype, {ShardDtype::fp32, "fp32"}, {ShardDtype::bf16, "bf16"});
PLUGTRAIN_CHOICE_WORDS(ActivationCheckpointing, {ActivationCheckpointing::none, "none"},
                       {ActivationCheckpointing::blocks, "blocks"});
PLUGTRAIN_CHOICE_WORDS(CifarLabels, {CifarLabels::fine, "fine"}, {CifarLabels::coarse, "coarse"});
PLUGTRAIN_CHOICE_WORDS(ImageCache, {ImageCache::memory, "memory"}, {ImageCache::none, "none"});
PLUGTRAIN_CHOICE_WORDS(Normalize, {Normalize::dataset, "dataset"}, {Normalize::none, "none"});
PLUGTRAIN_CHOICE_WORDS(Augmentation, {Augmentation::random_crop, "random_crop"},
                       {Augmentation::horizontal_flip, "horizontal_flip"},
                       {Augmentation::random_resized_crop, "random_resized_crop"}, {Augmentation::rotation, "rotation"},
                       {Augmentation::translate, "translate"}, {Augmentation::color_jitter, "color_jitter"},
                       {Augmentation::random_erasing, "random_erasing"});
PLUGTRAIN_CHOICE_WORDS(PaddingMode, {PaddingMode::constant, "constant"}, {PaddingMode::reflect, "reflect"},
                       {PaddingMode::edge, "edge"});
PLUGTRAIN_CHOICE_WORDS(MemoryFormatChoice, {MemoryFormatChoice::channels_last, "channels_last"},
                       {MemoryFormatChoice::contiguous, "contiguous"});
PLUGTRAIN_CHOICE_WORDS(OptimizerName, {OptimizerName::sgd, "sgd"}, {OptimizerName::adam, "adam"},
                       {OptimizerName::adamw, "adamw"}, {OptimizerName::rmsprop, "rmsprop"},
                       {OptimizerName::lion, "lion"});
PLUGTRAIN_CHOICE_WORDS(OptimizerImpl, {OptimizerImpl::fused, "fused"}, {OptimizerImpl::foreach, "foreach"},
                       {OptimizerImpl::loop, "loop"});
PLUGTRAIN_CHOICE_WORDS(LrScaling, {LrScaling::none, "none"}, {LrScaling::linear, "linear"}, {LrScaling::sqrt, "sqrt"});
PLUGTRAIN_CHOICE_WORDS(DecayScope, {DecayScope::all, "all"}, {DecayScope::matrices, "matrices"});
PLUGTRAIN_CHOICE_WORDS(ScheduleName, {ScheduleName::none, "none"}, {ScheduleName::step, "step"},
                       {ScheduleName::multistep, "multistep"}, {ScheduleName::cosine, "cosine"},
                       {ScheduleName::linear, "linear"}, {ScheduleName::onecycle, "onecycle"});
PLUGTRAIN_CHOICE_WORDS(CheckpointSave, {CheckpointSave::none, "none"}, {CheckpointSave::last, "last"},
                       {CheckpointSave::best, "best"}, {CheckpointSave::every, "every"});
PLUGTRAIN_CHOICE_WORDS(Direction, {Direction::max, "max"}, {Direction::min, "min"});
PLUGTRAIN_CHOICE_WORDS(OnNonfinite, {OnNonfinite::stop, "stop"}, {OnNonfinite::skip_step, "skip_step"});
PLUGTRAIN_CHOICE_WORDS(PrecisionMode, {PrecisionMode::fp32, "fp32"}, {PrecisionMode::bf16, "bf16"},
                       {PrecisionMode::fp16, "fp16"});
PLUGTRAIN_CHOICE_WORDS(SweepMethod, {SweepMethod::grid, "grid"}, {SweepMethod::random, "random"});
PLUGTRAIN_CHOICE_WORDS(Distribution, {Distribution::uniform, "uniform"}, {Distribution::log_uniform, "log_uniform"},
                       {Distribution::integer, "int"});
PLUGTRAIN_CHOICE_WORDS(SweepScheduler, {SweepScheduler::none, "none"}, {SweepScheduler::asha, "asha"},
                       {SweepScheduler::hyperband, "hyperband"});
#undef PLUGTRAIN_CHOICE_WORDS

// The processes and devices a strategy asks the backend for: fsdp's are ddp's.
inline Strategy process_layout(RunStrategy s) {
  switch (s) {
    case RunStrategy::single: return Strategy::single;
    case RunStrategy::dp: return Strategy::dp;
    case RunStrategy::ddp:
    case RunStrategy::fsdp: return Strategy::ddp;
  }
  return Strategy::single;
}

// The word for a value ("fp16"), for logs, records and messages.
template <class E>
const char* word_of(E value) {
  for (const auto& [v, word] : ChoiceWords<E>::words)
    if (v == value) return word;
  return "?";
}

// The value a word names; nullopt for any other word.
template <class E>
std::optional<E> choice_named(std::string_view word) {
  for (const auto& [v, w] : ChoiceWords<E>::words)
    if (word == w) return v;
  return std::nullopt;
}

template <class E>
std::vector<std::string> choice_words() {
  std::vector<std::string> words;
  for (const auto& [v, w] : ChoiceWords<E>::words) words.emplace_back(w);
  return words;
}

// "auto" or the value's word, for an optional choice.
template <class E>
std::string word_or_auto(const std::optional<E>& value) {
  return value ? word_of(*value) : "auto";
}


}  // namespace plugtrain
