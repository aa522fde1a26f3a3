// tfnet_lite: continuous sign-language recognition as such models are built (TFNet, VAC): a 2-D
// CNN per frame, a temporal 1-D convolution with pooling (K5-P2), a bidirectional LSTM and a
// linear layer scoring each step's glosses and CTC's blank.
#pragma once

#include <vector>

#include "plugtrain/model.h"

namespace sign_language {

plugtrain::ModelSpec tfnet_lite_spec();
std::vector<plugtrain::OptionRule> tfnet_lite_rules();

}  // namespace sign_language
