// wide_resnet50_2: torchvision's Wide ResNet-50-2 (torchvision/models/resnet.py): resnet50's
// layout, Bottleneck [3, 4, 6, 3], with width_per_group 128, so each block's inner 3x3 is twice
// as wide (conv1/conv2 128, 256, 512, 1024 channels) while the block outputs stay 256..2048.
// Module names are resnet50's, and it takes the same options (stem, width, se,
// zero_init_residual, dropout; resnet.cpp).
#include "blocks.h"

namespace plugtrain::models {

ModelSpec wide_resnet50_2_spec() {
  return resnet_family_spec("wide_resnet50_2",
                            "Wide ResNet-50-2 (torchvision names; Bottleneck [3, 4, 6, 3], inner width x2)",
                            {true, {3, 4, 6, 3}, 128});
}

}  // namespace plugtrain::models
