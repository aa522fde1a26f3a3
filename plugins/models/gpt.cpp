// gpt: nanoGPT's GPT (GPT-2's architecture): token and position embeddings, pre-norm blocks of
// causal self-attention and a GELU MLP, a final LayerNorm and a language-model head, by default
// tied to the token embedding. Its parameter names are nanoGPT's (transformer.wte,
// transformer.h.0.attn.c_attn, ..., lm_head), so an exported state_dict loads into nanoGPT.
//
// Input: int64 (N, T) token ids, T at most `context`. Output: (N, T, vocabulary) scores, for the
// language_model task.
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/embedding.h>

#include "models.h"
#include "plugtrain/units.h"
#include "transformer.h"

namespace plugtrain::models {

namespace {

struct GptShape {
  TransformerShape block;
  std::int64_t layers = 4, vocabulary = 0, context = 0;
  bool tied = true;
};

class TransformerTrunkImpl : public torch::nn::Module {
 public:
  explicit TransformerTrunkImpl(const GptShape& s)
      : wte(register_module("wte", torch::nn::Embedding(s.vocabulary, s.block.width))),
        wpe(register_module("wpe", torch::nn::Embedding(s.context, s.block.width))),
        h(register_module("h", torch::nn::ModuleList())),
        ln_f(register_module("ln_f", LayerNorm(s.block.width, s.block.bias))) {
    for (std::int64_t i = 0; i < s.layers; ++i) h->push_back(TransformerBlock(s.block));
  }
  torch::nn::Embedding wte, wpe;
  torch::nn::ModuleList h;
  LayerNorm ln_f;
};
TORCH_MODULE(TransformerTrunk);

class Gpt final : public TensorModel {
 public:
  explicit Gpt(const GptShape& s) : shape_(s), transformer(register_module("transformer", TransformerTrunk(s))) {
    // Tied: the head is the token embedding itself (one parameter, as nanoGPT's
    // `wte.weight = lm_head.weight`), so it is not registered a second time.
    if (!s.tied)
      lm_head = register_module("lm_head", torch::nn::Linear(torch::nn::LinearOptions(s.block.width, s.vocabulary).bias(false)));
    init_like_gpt2(*this, s.layers);
    for (std::int64_t i = 0; i < s.layers; ++i) units_.add("transformer.h." + std::to_string(i));
  }

  torch::Tensor forward(torch::Tensor idx) override {
    const std::int64_t t = idx.size(1);
    if (t > shape_.context)
      throw std::invalid_argument("gpt: a window of " + std::to_string(t) + " tokens is longer than the model's context " +
                                  std::to_string(shape_.context));
    const torch::Tensor positions = torch::arange(t, idx.options());
    torch::Tensor x = transformer->wte->forward(idx) + transformer->wpe->forward(positions);
    x = dropped(x, shape_.block.dropout, is_training());
    for (std::size_t i = 0; i < transformer->h->size(); ++i) {
      TransformerBlockImpl* block = transformer->h[i]->as<TransformerBlock>();
      x = units_.run(i, x, [block](const torch::Tensor& in) { return block->forward(in); });
    }
    x = transformer->ln_f->forward(x);
    return shape_.tied ? at::linear(x, transformer->wte->weight) : lm_head->forward(x);
  }

  // The blocks are the units (plugtrain/units.h): sharded and checkpointed one by one.
  void* extension(const char* name, std::uint32_t version) override { return units_.extension(name, version); }

 private:
  GptShape shape_;
  Units units_;

 public:
  TransformerTrunk transformer;
  torch::nn::Linear lm_head{nullptr};
};

std::shared_ptr<Model> make_gpt(const BatchDescription& batch, const TargetDescription& target, const Options& options) {
  if (batch.dtype("input") != c10::ScalarType::Long || batch.shape("input").size() != 1)
    fail("gpt", "reads windows of token ids (int64, one dimension per sample): use a text or tokens data set");
  GptShape s;
  s.layers = options.integer("layers");
  s.block.heads = options.integer("heads");
  s.block.width = options.integer("width");
  s.block.dropout = options.real("dropout");
  s.block.bias = options.boolean("bias");
  s.block.causal = true;
  s.block.fused = options.boolean("fused");
  s.tied = options.boolean("tie_embeddings");
  s.vocabulary = target.model_outputs();
  const std::int64_t window = batch.shape("input")[0];
  s.context = options.integer("context") > 0 ? options.integer("context") : window;
  if (window > s.context)
    fail("gpt", "the data's windows have " + std::to_string(window) + " tokens, more than model.context = " +
                    std::to_string(s.context) + "; lower [dataset] context or raise model.context");
  if (s.block.width % s.block.heads != 0)
    fail("gpt", "width " + std::to_string(s.block.width) + " is not a multiple of heads " + std::to_string(s.block.heads));
  if (s.vocabulary <= 0) fail("gpt", "the vocabulary is empty");
  return std::make_shared<Gpt>(s);
}

}  // namespace

ModelSpec gpt_spec() {
  ModelSpec spec;
  spec.name = "gpt";
  spec.description = "nanoGPT's GPT (GPT-2 architecture) for the language_model task; nanoGPT's parameter names";
  spec.options = {
      {"layers", OptionType::integer, std::int64_t{4}, "transformer blocks (n_layer)"},
      {"heads", OptionType::integer, std::int64_t{4}, "attention heads (n_head)"},
      {"width", OptionType::integer, std::int64_t{128}, "embedding width (n_embd), a multiple of heads"},
      {"context", OptionType::integer, std::int64_t{0}, "longest window (block_size); 0: the data's window"},
      {"dropout", OptionType::real, 0.0, "dropout on embeddings, attention and residuals, in [0, 1)"},
      {"bias", OptionType::boolean, true, "biases in the linear layers and LayerNorms"},
      {"tie_embeddings", OptionType::boolean, true, "the head's weight is the token embedding's"},
      {"fused", OptionType::boolean, true,
       "fused CPU kernels for float32 (bias+GELU, residual+LayerNorm, packed attention), 1.01-1.10x the steps of "
       "ATen's ops one by one at 1 thread (bench/transformer_bench --unfused); off: ATen's ops, PyTorch's own "
       "rounding"},
  };
  spec.batch_factory = make_gpt;
  spec.serves = {DatasetTargets::next_token};
  return spec;
}

std::vector<OptionRule> gpt_rules() {
  return {OptionRule("layers").at_least(1), OptionRule("heads").at_least(1), OptionRule("width").at_least(1),
          OptionRule("context").at_least(0), OptionRule("dropout").at_least(0).below(1)};
}

}  // namespace plugtrain::models
