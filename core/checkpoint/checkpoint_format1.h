// Format 1 checkpoints ("plugtrain-checkpoint-1", plugtrain before the per-part sections) kept
// every part's state in one flat record of "progress.*" keys. Reading one gives the sections
// today's parts read, so such a checkpoint resumes as before. This table is history: it never
// changes, and a new stateful part has nothing to add here.
#pragma once

namespace torch::serialize {
class InputArchive;
}

namespace plugtrain {

class CheckpointState;

CheckpointState format1_state(torch::serialize::InputArchive& archive);

}  // namespace plugtrain
