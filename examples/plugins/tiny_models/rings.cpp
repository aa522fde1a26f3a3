// "rings": points in the plane on `rings` concentric rings of radius 1, 2, ..., each ring a class,
// with Gaussian noise of `noise` — a data set no linear model separates. Each point is a 1x1x2
// sample (x, y); both splits are drawn from the experiment's seed. The data-set half of this
// plugin: one file registers its models and its data sets together (SDK 4).
#include <cmath>

#include <ATen/ATen.h>

#include "plugtrain/dataset.h"

namespace tiny {

namespace {

plugtrain::DatasetReadSplit draw(std::int64_t n, std::int64_t rings, double noise, const at::Generator& gen) {
  const at::Tensor ring = at::randint(rings, {n}, gen, at::kLong);
  const at::Tensor angle = at::rand({n}, gen) * (2 * M_PI);
  const at::Tensor radius = ring.to(at::kFloat) + 1 + at::randn({n}, gen) * noise;
  plugtrain::DatasetReadSplit split;
  split.inputs = at::stack({radius * at::cos(angle), radius * at::sin(angle)}, 1).view({n, 1, 1, 2}).contiguous();
  split.targets = ring;
  return split;
}

}  // namespace

void add_rings(plugtrain::Registrar& host) {
  plugtrain::DatasetSpec spec;
  spec.name = "rings";
  spec.description = "points on concentric rings, one class per ring (2-D, not linearly separable)";
  spec.options = {{"samples", plugtrain::OptionType::integer, std::int64_t(2000), "points in each split"},
                  {"rings", plugtrain::OptionType::integer, std::int64_t(3), "rings, one class each"},
                  {"noise", plugtrain::OptionType::real, 0.1, "spread of a point around its ring"}};
  spec.read = [](const plugtrain::DatasetQuery& query, const plugtrain::Options& o) {
    const at::Generator gen = at::detail::createCPUGenerator(query.seed());
    const std::int64_t n = o.integer("samples"), rings = o.integer("rings");
    plugtrain::DatasetRead read;
    read.train = draw(n, rings, o.real("noise"), gen);
    read.test = draw(n, rings, o.real("noise"), gen);
    read.num_classes = rings;
    read.source = std::to_string(rings) + " rings of " + std::to_string(n) + " points a split";
    return read;
  };
  spec.rules = {plugtrain::OptionRule("samples").at_least(10), plugtrain::OptionRule("rings").at_least(2).at_most(100),
                plugtrain::OptionRule("noise").at_least(0)};
  host.add_dataset(std::move(spec));
}

}  // namespace tiny
