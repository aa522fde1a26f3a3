"""The Python PyTorch peer of bench/crnn_ctc_bench.cpp (protocol: bench/python_peer.h).

plugins/models/crnn.cpp's CRNN, layer for layer, with examples/fashion_mnist_strips_crnn.toml's
options (channels [32, 64], hidden 128) on 1x28x112 strips of up to 4 items of 10 classes:
per block a 3x3 convolution (padding 1, no bias), batch norm, ReLU and a 2x2 max-pool; the
(N, 64, 7, 28) feature map read column by column as 28 steps of 64 x 7 = 448 features
(permute(0, 3, 1, 2).flatten(2)); a one-layer bidirectional LSTM (batch first, 128 a direction)
and a linear layer to 11 outputs per step (the 10 classes and CTC's blank, the last): (N, T, 11).
613,611 parameters. The loss is core/task/sequence.cpp's: log_softmax over the outputs,
transposed to (T, N, C), CTC with blank 10, reduction "mean" (each sample's loss over its target
length, then the batch mean), zero_infinity, every input length T, the target lengths the
non-negative entries of the (N, 4) targets padded with -1. Adam lr 2e-3 (PyTorch's default form
for the device), batch 32, train mode, fp32; model and inputs channels_last, as plugtrain's run
makes a model with 2-d convolutions and its batches. Synthetic normalised inputs and padded
targets held in memory on the device; a batch is the next slice of them.

First line: {"ready": true, torch, threads, parameters, devices} or {"skipped": reason} without
torch. Then for each line "time DEVICE STEPS" (DEVICE cpu or cuda): STEPS training steps after
a warm-up, ended by one synchronisation, answered {"samples_per_second": ...}. "quit" ends it.
"""

import argparse
import sys
import time

from peer_protocol import answer, import_or_skip, serve

CLASSES, SHAPE, CHANNELS, HIDDEN = 10, (1, 28, 112), (32, 64), 128


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--batch", type=int, default=32)
    args = ap.parse_args()
    modules = import_or_skip("torch", "torch.nn", "torch.nn.functional")
    if modules is None:
        return 0
    torch, nn, F = modules
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    blank = CLASSES  # [task] blank = -1: the last output

    class Crnn(nn.Module):
        def __init__(self):
            super().__init__()
            in_channels, rows = SHAPE[0], SHAPE[1] >> len(CHANNELS)
            blocks = []
            for out in CHANNELS:
                blocks += [nn.Conv2d(in_channels, out, 3, padding=1, bias=False), nn.BatchNorm2d(out),
                           nn.ReLU(inplace=True), nn.MaxPool2d(2)]
                in_channels = out
            self.features = nn.Sequential(*blocks)
            self.lstm = nn.LSTM(in_channels * rows, HIDDEN, batch_first=True, bidirectional=True)
            self.fc = nn.Linear(2 * HIDDEN, CLASSES + 1)

        def forward(self, x):
            x = self.features(x)
            x = x.permute(0, 3, 1, 2).flatten(2).contiguous()  # (N, C, H, W) -> (N, W, C x H)
            return self.fc(self.lstm(x)[0])

    def ctc(outputs, targets):  # core/task/sequence.cpp's Sequence::loss
        log_probs = outputs.float().log_softmax(2).transpose(0, 1)  # (T, N, C)
        lengths = targets.ge(0).sum(1)
        input_lengths = torch.full((outputs.size(0),), outputs.size(1), dtype=lengths.dtype, device=lengths.device)
        labels = targets.add(targets.ge(blank).long()).clamp_min(0)
        return F.ctc_loss(log_probs, labels, input_lengths, lengths, blank=blank, reduction="mean",
                          zero_infinity=True)

    def parameters_of(model):
        return sum(p.numel() for p in model.parameters())

    def make(device_name):
        device = torch.device(device_name)
        torch.manual_seed(1)
        model = Crnn().to(device, memory_format=torch.channels_last)
        model.train()
        optimizer = torch.optim.Adam(model.parameters(), lr=2e-3)
        n, slots = args.batch * 16, SHAPE[2] // SHAPE[1]
        images = torch.randn(n, *SHAPE).to(device).contiguous(memory_format=torch.channels_last)
        items = torch.randint(1, slots + 1, (n, 1))
        sequence = torch.randint(0, CLASSES, (n, slots))
        targets = torch.where(torch.arange(slots).unsqueeze(0) < items, sequence, torch.full((), -1)).to(device)
        return {"model": model, "optimizer": optimizer, "images": images, "targets": targets, "i": 0,
                "device": device}

    def step(run):
        b, i = args.batch, run["i"] % 16
        run["i"] += 1
        x, y = run["images"][i * b:(i + 1) * b], run["targets"][i * b:(i + 1) * b]
        run["optimizer"].zero_grad(set_to_none=True)
        ctc(run["model"](x), y).backward()
        run["optimizer"].step()

    def synchronise(run):
        if run["device"].type == "cuda":
            torch.cuda.synchronize()

    devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
    answer({"ready": True, "torch": torch.__version__, "threads": torch.get_num_threads(),
            "parameters": parameters_of(Crnn()), "devices": devices,
            "device": torch.cuda.get_device_name() if torch.cuda.is_available() else "cpu"})
    runs = {}

    def time_steps(words):
        if len(words) != 2 or words[0] not in devices:
            raise ValueError(f"usage: time {'|'.join(devices)} STEPS")
        steps = int(words[1])
        run = runs.get(words[0]) or runs.setdefault(words[0], make(words[0]))
        for _ in range(5):
            step(run)
        synchronise(run)
        start = time.perf_counter()
        for _ in range(steps):
            step(run)
        synchronise(run)
        return {"samples_per_second": steps * args.batch / (time.perf_counter() - start)}

    serve("time", time_steps)
    return 0


if __name__ == "__main__":
    sys.exit(main())
