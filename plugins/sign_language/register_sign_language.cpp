// The bundled sign-language plugin: the S4 guide's experiment (TFNet on CE-CSL) in plugtrain.
//   data set "ce-csl"   CE-CSL's release layout with each video's frames in a folder (ce_csl_reader.h)
//   model "tfnet_lite"  per-frame CNN, temporal conv, BiLSTM; CTC scores per step (tfnet_lite.h)
#include <filesystem>

#include "ce_csl_reader.h"
#include "plugtrain/dataset.h"
#include "tfnet_lite.h"

namespace {

using plugtrain::OptionRule;
using plugtrain::OptionType;

void register_datasets(plugtrain::Registrar& host) {
  plugtrain::DatasetSpec spec;
  spec.name = "ce-csl";
  spec.description = "CE-CSL continuous Chinese sign language: label/<split>.csv glosses, video/<split>/<Translator>/"
                     "<Number>/ frames; clips of up to `frames` frames stacked top to bottom, with their input_lengths";
  spec.targets = plugtrain::DatasetTargets::sequence;
  spec.options = {
      {"test_split", OptionType::string, std::string("test"), "the split the test side reads: test, or dev"},
      {"frames", OptionType::integer, std::int64_t{32}, "frames per clip: a longer video is sampled evenly, a shorter one padded"},
      {"height", OptionType::integer, std::int64_t{64}, "each frame's height after resizing"},
      {"width", OptionType::integer, std::int64_t{64}, "each frame's width after resizing"},
      {"gloss_separator", OptionType::string, std::string("/"), "what separates the glosses of the Gloss column"},
      {"max_videos", OptionType::integer, std::int64_t{0}, "read only the first N videos of each split (0: all)"},
  };
  // Each clip's input_lengths, for tfnet_lite's forward_batch.
  spec.fields = {"input_lengths"};
  spec.read = [](const plugtrain::DatasetQuery& query, const plugtrain::Options& o) {
    sign_language::CeCslOptions options;
    options.test_split = o.string("test_split");
    options.frames = o.integer("frames");
    options.height = o.integer("height");
    options.width = o.integer("width");
    options.gloss_separator = o.string("gloss_separator");
    options.max_videos = o.integer("max_videos");
    return sign_language::read_ce_csl(query.path(), options);
  };
  spec.rules = {OptionRule("test_split").one_of({"test", "dev"}), OptionRule("frames").at_least(1).at_most(1024),
                OptionRule("height").at_least(4).at_most(1024), OptionRule("width").at_least(4).at_most(1024),
                OptionRule("max_videos").at_least(0)};
  host.add_dataset(std::move(spec));
}

void register_plugin(plugtrain::Registrar& host) {
  plugtrain::ModelSpec tfnet = sign_language::tfnet_lite_spec();
  tfnet.rules = sign_language::tfnet_lite_rules();
  host.add_model(std::move(tfnet));
  register_datasets(host);
}

}  // namespace

PLUGTRAIN_PLUGIN(register_plugin, PLUGTRAIN_KIND_MODELS | PLUGTRAIN_KIND_DATASETS, "sign_language", "0.1.0",
                 "Continuous sign-language recognition: the CE-CSL reader (ce-csl) and tfnet_lite")
