#include "plugins/model_forward.h"
#include "use/generate.h"

#include <limits>
#include <map>
#include <optional>
#include <ostream>
#include <sstream>

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/core/grad_mode.h>
#include <nlohmann/json.hpp>

#include "config/config_error.h"
#include "run/classes_file.h"
#include "train/precision.h"
#include "use/run_tokenizer.h"
#include "util/error.h"
#include "util/text.h"

namespace plugtrain {

namespace {

bool byte_vocabulary(const std::vector<std::string>& names) { return names.size() == 256 && names[0] == "<0x00>"; }

// A vocabulary without text (a tokens data set without itos): classes.json names each id by its number.
bool numbered_vocabulary(const std::vector<std::string>& names) {
  for (std::size_t i = 0; i < names.size(); ++i)
    if (names[i] != std::to_string(i)) return false;
  return true;
}

// The run's vocabulary and window, from classes.json; Error when the run is not a language model.
RunClasses vocabulary_of(const TrainedFiles& files) {
  std::optional<RunClasses> classes = files.run_folder.empty() ? std::nullopt : read_classes_file(files.run_folder);
  if (!classes)
    throw Error(files.weights.string() + ": generate needs the run's folder with its classes.json (the vocabulary)",
                exit_bad_input);
  if (!classes->token_ids)
    throw Error(files.run_folder.string() + ": not a language model's run (its samples are not token ids): generate "
                "needs a run of task language_model", exit_bad_input);
  return *classes;
}

// A data set of one window: the shape build_trained_model makes the run's task and model for.
data::Dataset one_window(const RunClasses& classes) {
  data::Dataset d;
  d.images = at::zeros({1, classes.sample_shape.at(0)}, at::TensorOptions().dtype(at::kLong));
  d.labels = d.images.clone();
  d.target_kind = DatasetTargets::next_token;
  d.num_classes = classes.num_classes;
  d.class_names = classes.names;
  d.sample_shape = classes.sample_shape;
  return d;
}

// The next token after `window` (1, t): the last position's scores / temperature, the top k kept.
std::int64_t draw_next(const at::Tensor& scores, const GenerateRequest& request, at::Generator& generator) {
  at::Tensor last = scores.select(1, -1).squeeze(0).to(at::kCPU, at::kFloat);
  if (request.temperature <= 0) return last.argmax().item<std::int64_t>();
  last = last / request.temperature;
  if (request.top_k > 0 && request.top_k < last.numel()) {
    const at::Tensor kth = std::get<0>(last.topk(request.top_k)).select(0, -1);
    last = last.masked_fill(last < kth, -std::numeric_limits<float>::infinity());
  }
  return at::multinomial(last.softmax(0), 1, /*replacement=*/false, generator).item<std::int64_t>();
}

// An empty prompt starts from a newline (the first token of one), or token 0.
std::vector<std::int64_t> start_ids(std::vector<std::int64_t> ids, const RunClasses& classes) {
  if (!ids.empty()) return ids;
  std::int64_t start = 0;
  for (std::size_t i = 0; i < classes.names.size(); ++i)
    if (classes.names[i] == "\n" || classes.names[i] == "<0x0A>") start = std::int64_t(i);
  return {start};
}

// The prompt in the run's own tokenizer: the ids it trained on for the same text.
std::vector<std::int64_t> prompt_ids(const Tokenizer& tokenizer, const std::string& prompt, const RunClasses& classes) {
  std::vector<std::int64_t> ids = tokenizer.encode(prompt);
  for (std::int64_t id : ids)
    if (id < 0 || id >= classes.num_classes)
      throw Error("--prompt: the run's tokenizer gives token " + std::to_string(id) +
                      ", outside the model's vocabulary of " + std::to_string(classes.num_classes),
                  exit_bad_input);
  return ids;
}

// The generated text as the tokenizer decodes it after the prompt: SentencePiece turns a leading
// "\u2581" into a space only inside a text, so the generated ids are decoded with the prompt's and
// the prompt's own text cut off.
std::string decoded_after(const Tokenizer& tokenizer, std::vector<std::int64_t> prompt,
                          const std::vector<std::int64_t>& generated) {
  const std::string before = tokenizer.decode(prompt);
  prompt.insert(prompt.end(), generated.begin(), generated.end());
  const std::string all = tokenizer.decode(prompt);
  if (all.compare(0, before.size(), before) == 0) return all.substr(before.size());
  return tokenizer.decode(generated);
}

}  // namespace

std::string decode_tokens(const std::vector<std::int64_t>& ids, const std::vector<std::string>& names) {
  std::string text;
  if (numbered_vocabulary(names)) {  // ids as numbers, one space before each
    for (std::int64_t id : ids) text += " " + std::to_string(id);
    return text;
  }
  for (std::int64_t id : ids) text += token_bytes(names.at(std::size_t(id)));
  return text;
}

std::vector<std::int64_t> encode_text(const std::string& text, const std::vector<std::string>& names) {
  std::vector<std::int64_t> ids;
  if (byte_vocabulary(names)) {
    for (unsigned char c : text) ids.push_back(c);
    return ids;
  }
  if (numbered_vocabulary(names)) {  // the prompt is ids: "12 7 431"
    std::istringstream words(text);
    for (std::string word; words >> word;) {
      std::size_t used = 0;
      long long id = -1;
      try {
        id = std::stoll(word, &used);
      } catch (const std::exception&) {
      }
      if (used != word.size() || id < 0 || id >= std::int64_t(names.size()))
        throw Error("--prompt: '" + word + "' is not a token id of the run's vocabulary (0.." + std::to_string(names.size() - 1) +
                    "; its data set gave no text for the ids)", exit_bad_input);
      ids.push_back(id);
    }
    return ids;
  }
  std::map<std::string, std::int64_t> id_of;
  for (std::size_t i = 0; i < names.size(); ++i) id_of.emplace(names[i], std::int64_t(i));
  for (std::size_t i = 0; i < text.size();) {
    const unsigned char b = static_cast<unsigned char>(text[i]);
    const std::size_t length = b < 0x80 ? 1 : (b >> 5) == 0x6 ? 2 : (b >> 4) == 0xE ? 3 : 4;
    const std::string character = text.substr(i, length);
    const auto it = id_of.find(character);
    if (it == id_of.end())
      throw Error("--prompt: '" + character + "' (at byte " + std::to_string(i) + ") is not in the run's vocabulary of " +
                  std::to_string(names.size()) + " tokens", exit_bad_input);
    ids.push_back(it->second);
    i += length;
  }
  return ids;
}

Generated generate_text(const GenerateRequest& request, std::ostream& log) {
  TrainedFiles files = find_trained_files(request.source.given, request.source.experiment);
  const RunClasses classes = vocabulary_of(files);
  const bool tokenized = !classes.tokenizer_file.empty();  // the run keeps the tokenizer its ids came from
  std::vector<std::int64_t> ids;
  if (!tokenized) ids = start_ids(encode_text(request.prompt, classes.names), classes);  // before any model work
  TrainedRun t = plan_trained_run(request.source, std::move(files));
  std::optional<OpenedTokenizer> tokenizer;
  if (tokenized) {
    if (!t.run.dataset) throw Error("generate: the run's data set is not known to this host", exit_bad_input);
    tokenizer = open_tokenizer_with(*t.run.dataset, classes.tokenizer_file);
    ids = start_ids(prompt_ids(*tokenizer->tokenizer, request.prompt, classes), classes);
  }
  const std::vector<std::int64_t> prompt = ids;
  const Experiment& e = t.run.experiment;
  const std::shared_ptr<Model> model = build_trained_model(t, one_window(classes), log).model;

  at::NoGradGuard no_grad;
  model->eval();
  const Precision precision(e.train.precision, t.plan.device);
  at::Generator generator = at::detail::createCPUGenerator(request.seed);
  const std::int64_t context = classes.sample_shape.at(0);
  Generated out;
  out.prompt = request.prompt;
  out.prompt_tokens = prompt;
  for (std::int64_t n = 0; n < request.tokens; ++n) {
    const std::int64_t begin = std::max<std::int64_t>(0, std::int64_t(ids.size()) - context);
    const at::Tensor input =
        at::tensor(std::vector<std::int64_t>(ids.begin() + begin, ids.end()), at::kLong).unsqueeze(0).to(t.plan.device);
    at::Tensor scores;
    {
      const AutocastScope autocast = precision.autocast();
      scores = forward_input(*model, input);
    }
    const std::int64_t next = draw_next(scores, request, generator);
    ids.push_back(next);
    out.tokens.push_back(next);
  }
  out.text =
      tokenizer ? decoded_after(*tokenizer->tokenizer, prompt, out.tokens) : decode_tokens(out.tokens, classes.names);
  return out;
}

std::string generated_json(const GenerateRequest& request, const Generated& generated) {
  // Byte vocabularies may cut a character in two: invalid UTF-8 is replaced, not thrown on.
  const nlohmann::json j = {{"prompt", generated.prompt}, {"text", generated.text},
                            {"tokens", generated.tokens}, {"prompt_tokens", generated.prompt_tokens},
                            {"seed", request.seed},       {"temperature", request.temperature},
                            {"top_k", request.top_k}};
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace plugtrain
