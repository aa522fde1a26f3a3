"""Eager PyTorch's side of tests/models/timm_parity_test.cpp: timm models trained full-batch on
the first samples of Fashion-MNIST, the recipe `plugtrain run` is held to.

For each model M this writes DIR/M.pt2 (timm.create_model(M, pretrained=False, in_chans=1,
num_classes=10) with seed 0, exported in train mode with a dynamic batch; its weights are where
both sides start) and DIR/M_losses.json: every step's loss of two eager runs from those weights,
one per path the test compares,

    contiguous_loop      PyTorch's defaults on the CPU: NCHW tensors, single-tensor SGD
                         (foreach=False, what torch.optim.SGD picks for CPU tensors)
    channels_last_fused  plugtrain's defaults: model.to(memory_format=torch.channels_last) and the
                         batch .contiguous(channels_last), as timm's train.py --channels-last;
                         SGD(fused=True), one ATen kernel per step

    python timm_reference.py --out DIR --data FASHION_MNIST_DIR --models resnet10t,... [--steps 10]
    python timm_reference.py --data FASHION_MNIST_DIR --models ... --spreads

--spreads prints, step by step, how far eager drifts from its own defaults when only one thing
changes (the layout, the optimizer's form, 2 threads): the figures beside the test.

The batch is the whole training set (--samples, in the files' order), normalised as plugtrain's
loader does: byte * float32(1 / (255 std)) + float32(-mean / std). SGD: lr 0.05, momentum 0.9,
weight decay 5e-4; cross-entropy, mean over the batch; one thread unless --threads.
"""
import argparse
import gzip
import json
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

try:
    import timm
except ImportError:
    sys.exit("timm_reference: error: this Python has no timm (scripts/setup installs it into the venv)")

MEAN, STD = 0.2860, 0.3530  # the experiment's data.mean and data.std
LR, MOMENTUM, WEIGHT_DECAY = 0.05, 0.9, 5e-4
CLASSES = 10


def read_idx(path, count):
    """The first `count` records of a gzipped IDX file, as a uint8 tensor."""
    with gzip.open(path) as f:
        data = f.read()
    dims = data[3]
    shape = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(dims)]
    array = np.frombuffer(data, np.uint8, offset=4 + 4 * dims).reshape(shape)[:count]
    return torch.from_numpy(array.copy())


def training_batch(folder, samples):
    images = read_idx(os.path.join(folder, "train-images-idx3-ubyte.gz"), samples).unsqueeze(1)
    labels = read_idx(os.path.join(folder, "train-labels-idx1-ubyte.gz"), samples).long()
    scale = torch.tensor(np.float32(1.0 / (255.0 * STD)))
    shift = torch.tensor(np.float32(-MEAN / STD))
    return images.float() * scale + shift, labels


def fresh_model(name):
    torch.manual_seed(0)
    return timm.create_model(name, pretrained=False, num_classes=CLASSES, in_chans=1).train()


def train(name, init, batch, steps, channels_last, optimizer_form):
    """Every step's loss (float64 values of the float32 losses)."""
    model = fresh_model(name)
    model.load_state_dict(init)
    x, y = batch
    if channels_last:
        model = model.to(memory_format=torch.channels_last)
        x = x.contiguous(memory_format=torch.channels_last)
    form = {"loop": {"foreach": False}, "foreach": {"foreach": True}, "fused": {"fused": True}}[optimizer_form]
    opt = torch.optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM, weight_decay=WEIGHT_DECAY, **form)
    losses = []
    for _ in range(steps):
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def export(name, batch, path):
    """Exports the seeded model in train mode with a dynamic batch; returns its state_dict."""
    model = fresh_model(name)
    init = {k: v.detach().clone() for k, v in model.state_dict().items()}
    ep = torch.export.export(model, (batch[0][:4],), dynamic_shapes=({0: torch.export.Dim("batch", min=1)},))
    torch.export.save(ep, path)
    if dict(ep.state_dict).keys() - init.keys() or any(not torch.equal(ep.state_dict[k], init[k]) for k in ep.state_dict):
        raise RuntimeError(f"{name}: the exported weights differ from the module's")
    return init


def relative_spread(a, b):
    return [abs(p - q) / abs(q) for p, q in zip(a, b)]


def print_spreads(name, init, batch, steps, threads):
    base = train(name, init, batch, steps, False, "loop")
    runs = {"channels_last": lambda: train(name, init, batch, steps, True, "loop"),
            "fused": lambda: train(name, init, batch, steps, False, "fused"),
            "foreach": lambda: train(name, init, batch, steps, False, "foreach")}
    for label, run in runs.items():
        print(name, label, " ".join(f"{s:.1e}" for s in relative_spread(run(), base)), flush=True)
    torch.set_num_threads(2)
    print(name, "threads2", " ".join(f"{s:.1e}" for s in relative_spread(train(name, init, batch, steps, False, "loop"),
                                                                        base)), flush=True)
    torch.set_num_threads(threads)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", help="folder for M.pt2 and M_losses.json")
    parser.add_argument("--data", required=True, help="the Fashion-MNIST folder (its .gz IDX files)")
    parser.add_argument("--models", required=True, help="comma-separated timm model names")
    parser.add_argument("--samples", type=int, default=64, help="training samples, all in one batch")
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--spreads", action="store_true", help="print eager's own spreads instead")
    args = parser.parse_args()
    if args.samples < 4 or args.steps < 1 or args.threads < 1 or not (args.out or args.spreads):
        print("timm_reference: --samples >= 4, --steps >= 1, --threads >= 1 and --out (or --spreads)",
              file=sys.stderr)
        return 1
    torch.set_num_threads(args.threads)
    batch = training_batch(args.data, args.samples)
    for name in [m for m in args.models.split(",") if m]:
        if args.spreads:
            print_spreads(name, fresh_model(name).state_dict(), batch, args.steps, args.threads)
            continue
        os.makedirs(args.out, exist_ok=True)
        init = export(name, batch, os.path.join(args.out, f"{name}.pt2"))
        losses = {"contiguous_loop": train(name, init, batch, args.steps, False, "loop"),
                  "channels_last_fused": train(name, init, batch, args.steps, True, "fused")}
        with open(os.path.join(args.out, f"{name}_losses.json"), "w") as f:
            json.dump(losses, f)
        print(name, sum(p.numel() for p in fresh_model(name).parameters()), "parameters", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
