#!/usr/bin/env bash
# The emulated accelerator (examples/plugins/emulated_accelerator) against the CPU, in one
# invocation, rows alternating: the Fashion-MNIST MLP and convnet and ResNet-18 in CIFAR form
# (on generated CIFAR-10 files), same experiment and seed on both. Prints final test accuracy,
# samples/s and the operators that fell back to the CPU with their counts (summary.json).
#   bench/emulated_device.sh [build folder]   (FM_TRAIN / FM_TEST / EPOCHS: subset sizes, epochs)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(realpath "${1:-$root/build}")
exe=$build/bin/plugtrain
plugin=$build/test-plugins/emulated
work=$(mktemp -d /tmp/ptemu-XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work"
train=${FM_TRAIN:-10000} test=${FM_TEST:-2000} epochs=${EPOCHS:-2}

# CIFAR-10's binary layout: 1 label byte then 3x32x32 pixels, five training batches and a test batch.
python3 - <<'PY'
import os, random
random.seed(0)
os.makedirs("cifar", exist_ok=True)
def batch(name, n):
    with open(os.path.join("cifar", name), "wb") as f:
        for i in range(n):
            label = random.randrange(10)
            f.write(bytes([label]) + bytes((label * 25 + random.randrange(40)) % 256 for _ in range(3072)))
for b in range(1, 6):
    batch(f"data_batch_{b}.bin", 100)
batch("test_batch.bin", 200)
PY

fm() { cat <<TOML
[experiment]
name = "$1"
seed = 1
[model]
name = "$1"
[data]
path = "${FASHION_MNIST:-/usr/share/datasets/fashion-mnist}"
train_subset = $train
test_subset = $test
batch_size = 100
[train]
epochs = $epochs
log_interval = 0
TOML
}
fm mlp > mlp.toml
fm convnet > convnet.toml
cat > resnet18.toml <<TOML
[experiment]
name = "resnet18"
seed = 1
[model]
name = "resnet18"
stem = "cifar"
[data]
dataset = "cifar10"
path = "cifar"
batch_size = 64
[optim]
name = "sgd"
lr = 0.05
momentum = 0.9
[train]
epochs = 1
log_interval = 0
TOML

printf '%-9s %-9s %9s %11s  %s\n' MODEL BACKEND ACCURACY SAMPLES/S "CPU FALLBACKS (operators, calls; most)"
for model in mlp convnet resnet18; do
  for backend in cpu emulated; do
    "$exe" run $model.toml --plugin-path "$plugin" --set "backend.name=\"$backend\"" > $model-$backend.log 2>&1 \
      || { cat $model-$backend.log; exit 1; }
    summary=$(ls -d runs/$model/version_* | sort -V | tail -1)/summary.json
    python3 - "$summary" "$model" "$backend" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
f = s.get("cpu_fallbacks", {})
most = ", ".join(f"{k} {v}" for k, v in sorted(f.items(), key=lambda kv: -kv[1])[:4])
print(f"{sys.argv[2]:<9} {sys.argv[3]:<9} {s['final_test_accuracy']:9.4f} {s['samples_per_second']:11.0f}  "
      f"{len(f)}, {sum(f.values())}" + (f"; {most}" if most else ""))
PY
  done
done
