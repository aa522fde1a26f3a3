#include "readers/token_windows.h"

#include <algorithm>
#include <stdexcept>

namespace bundled_datasets {

namespace {

using plugtrain::DatasetRead;
using plugtrain::Options;

struct Windows {
  at::Tensor inputs, targets;
};

// Windows of `context` tokens every `stride` tokens of `stream` (int64), and the tokens after them.
Windows windows_of(const at::Tensor& stream, std::int64_t context, std::int64_t stride) {
  const std::int64_t count = (stream.numel() - context - 1) / stride + 1;
  return {stream.as_strided({count, context}, {stride, 1}, 0), stream.as_strided({count, context}, {stride, 1}, 1)};
}

std::int64_t eval_stride(const Options& options, std::int64_t context, std::int64_t val_tokens) {
  std::int64_t stride = options.integer("eval_stride") > 0 ? options.integer("eval_stride") : context;
  const std::int64_t limit = options.integer("val_windows");
  const std::int64_t room = val_tokens - context - 1;  // the last window starts at most here
  if (limit > 1 && room / stride + 1 > limit) stride = std::max<std::int64_t>(stride, room / (limit - 1));
  if (limit == 1) stride = room + 1;
  return stride;
}

}  // namespace

DatasetRead windows_read(const at::Tensor& train, const at::Tensor& val, const Options& options,
                         const std::string& where) {
  const std::int64_t context = options.integer("context");
  for (const auto& [split, stream] : {std::pair{"training", train}, std::pair{"val", val}})
    if (stream.numel() < context + 1)
      throw std::runtime_error(where + ": the " + std::string(split) + " split has " + std::to_string(stream.numel()) +
                               " tokens, fewer than one window of [dataset] context = " + std::to_string(context) +
                               " and its next token; lower the context or give more text to that split");
  DatasetRead read;
  read.targets = plugtrain::DatasetTargets::next_token;
  const Windows t = windows_of(train, context, 1);
  read.train.inputs = t.inputs;
  read.train.targets = t.targets;
  const Windows v = windows_of(val, context, eval_stride(options, context, val.numel()));
  read.validation.inputs = v.inputs;
  read.validation.targets = v.targets;
  read.test_split = "val";
  return read;
}

}  // namespace bundled_datasets
