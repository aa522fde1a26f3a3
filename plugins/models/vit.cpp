// vit: a Vision Transformer (Dosovitskiy et al.; timm's VisionTransformer in its plain form):
// non-overlapping patches embedded by a strided convolution, a class token or mean pooling,
// learnt position embeddings, pre-norm transformer blocks (transformer.h), a final LayerNorm
// and a linear head. Names: patch_embed.proj, cls_token, pos_embed, blocks.<i>.{ln_1, attn.c_attn,
// attn.c_proj, ln_2, mlp.c_fc, mlp.c_proj}, norm, head.
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/conv.h>

#include "models.h"
#include "plugtrain/units.h"
#include "transformer.h"

namespace plugtrain::models {

namespace {

struct VitShape {
  TransformerShape block;
  std::int64_t channels = 1, height = 28, width = 28, patch = 4, depth = 6, classes = 10;
  bool class_token = true;
};

class PatchEmbedImpl : public torch::nn::Module {
 public:
  PatchEmbedImpl(std::int64_t channels, std::int64_t width, std::int64_t patch)
      : proj(register_module("proj", torch::nn::Conv2d(torch::nn::Conv2dOptions(channels, width, patch).stride(patch)))) {}
  // (N, C, H, W) -> (N, patches, width)
  torch::Tensor forward(const torch::Tensor& x) { return proj->forward(x).flatten(2).transpose(1, 2); }
  torch::nn::Conv2d proj;
};
TORCH_MODULE(PatchEmbed);

class Vit final : public TensorModel {
 public:
  explicit Vit(const VitShape& s)
      : shape_(s),
        patch_embed(register_module("patch_embed", PatchEmbed(s.channels, s.block.width, s.patch))),
        blocks(register_module("blocks", torch::nn::ModuleList())),
        norm(register_module("norm", LayerNorm(s.block.width, true))),
        head(register_module("head", torch::nn::Linear(s.block.width, s.classes))) {
    const std::int64_t tokens = (s.height / s.patch) * (s.width / s.patch) + (s.class_token ? 1 : 0);
    if (s.class_token) cls_token = register_parameter("cls_token", torch::zeros({1, 1, s.block.width}));
    pos_embed = register_parameter("pos_embed", torch::zeros({1, tokens, s.block.width}));
    for (std::int64_t i = 0; i < s.depth; ++i) blocks->push_back(TransformerBlock(s.block));
    init_like_gpt2(*this, s.depth);
    for (std::int64_t i = 0; i < s.depth; ++i) units_.add("blocks." + std::to_string(i));
  }

  torch::Tensor forward(torch::Tensor images) override {
    torch::Tensor x = patch_embed->forward(images);
    if (shape_.class_token) x = torch::cat({cls_token.expand({x.size(0), 1, x.size(2)}), x}, 1);
    x = x + pos_embed;
    x = dropped(x, shape_.block.dropout, is_training());
    for (std::size_t i = 0; i < blocks->size(); ++i) {
      TransformerBlockImpl* block = blocks[i]->as<TransformerBlock>();
      x = units_.run(i, x, [block](const torch::Tensor& in) { return block->forward(in); });
    }
    x = norm->forward(x);
    return head->forward(shape_.class_token ? x.select(1, 0) : x.mean(1));
  }

  // The blocks are the units (plugtrain/units.h): sharded and checkpointed one by one.
  void* extension(const char* name, std::uint32_t version) override { return units_.extension(name, version); }

 private:
  VitShape shape_;
  Units units_;

 public:
  PatchEmbed patch_embed;
  torch::nn::ModuleList blocks;
  LayerNorm norm;
  torch::nn::Linear head;
  torch::Tensor cls_token, pos_embed;
};

std::shared_ptr<Model> make_vit(const ModelInputs& inputs, const Options& options) {
  check_inputs("vit", inputs);
  VitShape s;
  s.channels = inputs.input_shape[0];
  s.height = inputs.input_shape[1];
  s.width = inputs.input_shape[2];
  s.patch = options.integer("patch");
  s.depth = options.integer("depth");
  s.classes = inputs.num_classes;
  s.block.width = options.integer("width");
  s.block.heads = options.integer("heads");
  s.block.mlp_ratio = options.real("mlp_ratio");
  s.block.dropout = options.real("dropout");
  s.class_token = options.string("pooling") == "token";
  s.block.fused = options.boolean("fused");
  if (s.height % s.patch != 0 || s.width % s.patch != 0)
    fail("vit", "images of " + std::to_string(s.height) + "x" + std::to_string(s.width) + " do not divide into patches of " +
                    std::to_string(s.patch));
  if (s.block.width % s.block.heads != 0)
    fail("vit", "width " + std::to_string(s.block.width) + " is not a multiple of heads " + std::to_string(s.block.heads));
  return std::make_shared<Vit>(s);
}

}  // namespace

ModelSpec vit_spec() {
  ModelSpec spec;
  spec.name = "vit";
  spec.description = "Vision Transformer: patch embedding, class token or mean pooling, pre-norm blocks, linear head";
  spec.options = {
      {"patch", OptionType::integer, std::int64_t{4}, "patch side in pixels (the image sides must be multiples)"},
      {"width", OptionType::integer, std::int64_t{128}, "embedding width, a multiple of heads"},
      {"depth", OptionType::integer, std::int64_t{6}, "transformer blocks"},
      {"heads", OptionType::integer, std::int64_t{4}, "attention heads"},
      {"mlp_ratio", OptionType::real, 4.0, "MLP hidden width / width"},
      {"pooling", OptionType::string, std::string("token"), "token (a class token) or mean (of the patch tokens)"},
      {"dropout", OptionType::real, 0.0, "dropout on embeddings, attention and residuals, in [0, 1)"},
      {"fused", OptionType::boolean, true,
       "fused CPU kernels for float32 (bias+GELU, residual+LayerNorm, packed attention), 1.01-1.10x the steps of "
       "ATen's ops one by one at 1 thread (bench/transformer_bench --unfused); off: ATen's ops, PyTorch's own "
       "rounding"},
  };
  spec.factory = make_vit;
  spec.serves = per_sample_targets();
  return spec;
}

std::vector<OptionRule> vit_rules() {
  return {OptionRule("patch").at_least(1),   OptionRule("width").at_least(1),
          OptionRule("depth").at_least(1),   OptionRule("heads").at_least(1),
          OptionRule("mlp_ratio").above(0),  OptionRule("pooling").one_of({"token", "mean"}),
          OptionRule("dropout").at_least(0).below(1)};
}

}  // namespace plugtrain::models
