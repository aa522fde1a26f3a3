// The bundled data-sets plugin: real Fashion-MNIST items arranged for every task.
//   fashion-mnist-strips    sequence      1 to max_items items side by side; their classes in order
//   fashion-mnist-pairs     multilabel    two items side by side; both classes
//   fashion-mnist-rotation  regression    an item rotated by an angle in [-max_degrees, max_degrees]
//   fashion-mnist-masks     segmentation  each item's own pixels take its class + 1, the rest 0
// Each sample is drawn from its split (training samples from the training images, test samples
// from the test images) with a generator seeded by experiment.seed, so a run is repeatable.
#include "task_sets.h"

namespace {

void register_sets(plugtrain::Registrar& host) {
  for (auto* sets : {&fashion_mnist_tasks::strip_and_pair_sets, &fashion_mnist_tasks::rotation_and_mask_sets})
    for (const plugtrain::DatasetSpec& set : (*sets)()) host.add_dataset(set);
}

}  // namespace

PLUGTRAIN_PLUGIN(register_sets, PLUGTRAIN_KIND_DATASETS, "fashion_mnist_tasks", "0.1.0",
                 "Fashion-MNIST for every task: strips (sequence), pairs (multilabel), rotation "
                 "(regression), masks (segmentation)")
