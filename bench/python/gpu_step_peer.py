"""The Python peer of bench/gpu_step_bench.cpp (protocol: bench/python_peer.h).

PyTorch on CUDA with the data on the GPU, the same models and recipes as the bench's plugtrain
rows: the MLP 784-256-128-10 (ReLU, dropout 0.1) and the convnet (conv 5x5 32 and 64 channels,
2x2 max-pools, fc 1024, dropout 0.4) with Adam lr 1e-3 (PyTorch's default form on CUDA: foreach)
at batch 100 on 1x28x28; ResNet-18 in its CIFAR form (torchvision, conv1 3x3 stride 1, no
max-pool) with SGD lr 0.1 momentum 0.9 Nesterov weight decay 5e-4 at batch 128 on 3x32x32; and
gpt2, nanoGPT's GPT (python/transformer_twins.py) in the GPT-2-small shape (12 layers, 12 heads,
width 768, vocabulary 50304) at --gpt-context and --gpt-batch, AdamW lr 1e-3 betas (0.9, 0.99)
weight decay 0.1 on matrices, gradient clipping 1 (transformer_bench's recipe). Convolutional
models and inputs in channels_last; TF32 as PyTorch's defaults (convolutions yes, matmul no);
bf16 through torch.autocast.

Each model runs in a MODE: eager, or torch.compile(model, mode=MODE) for MODE
"reduce-overhead" (Inductor's kernels replayed from CUDA graphs) or
"max-autotune-no-cudagraphs" (Inductor's autotuned kernels, launched one by one). The model's
forward (and so its backward) is compiled; the optimizer runs eagerly as in eager mode.

First line: {"ready": true, versions, device} or {"skipped": reason} without torch, torchvision
or a CUDA device. Then:
  "prepare MODEL PRECISION MODE"      builds the run and warms it up (compiling it, for a compile
                                      mode): {"prepare_seconds": s, "parameters": n}
  "time MODEL PRECISION STEPS [MODE]" STEPS training steps after a warm-up, ended by one
                                      torch.cuda.synchronize(): {"samples_per_second": ...}
                                      (a sample of gpt2: one sequence of --gpt-context tokens)
A run that cannot be built or warmed up (a compile mode without Triton or a C compiler, out of
memory, ...) answers {"failed": reason}, and the bench leaves that column out; the others go on.
"""

import argparse
import sys
import time

from peer_protocol import answer, import_or_skip, serve

MODES = ("eager", "reduce-overhead", "max-autotune-no-cudagraphs")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--twins", default=None, help="the folder of transformer_twins.py (for gpt2)")
    ap.add_argument("--gpt-context", type=int, default=1024)
    ap.add_argument("--gpt-batch", type=int, default=8)
    ap.add_argument("--device", default="cuda", help="cpu: the same paths on the CPU, a check of this script")
    args = ap.parse_args()
    modules = import_or_skip("torch", "torch.nn", "torch.nn.functional", "torchvision")
    if modules is None:
        return 0
    torch, nn, F, torchvision = modules
    device = torch.device(args.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        answer({"skipped": "torch.cuda.is_available() is False"})
        return 0
    torch.backends.cudnn.benchmark = True
    answer({"ready": True, "torch": torch.__version__, "torchvision": torchvision.__version__,
            "device": torch.cuda.get_device_name() if device.type == "cuda" else args.device})
    runs, failed = {}, {}

    def prepare(words):
        name, precision, mode = words
        key = (name, precision, mode)
        if key in failed:
            return {"failed": failed[key]}
        if key not in runs:
            start = time.perf_counter()
            try:
                run = build_run(torch, nn, F, torchvision, args, name, mode, device)
                warm_up(torch, F, run, precision)
            except Exception as e:  # noqa: BLE001 - a mode that cannot run (out of memory, no Triton) is a column skipped
                failed[key] = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:300]
                if device.type == "cuda":
                    torch.cuda.empty_cache()
                return {"failed": failed[key]}
            run["prepare_seconds"] = time.perf_counter() - start
            runs[key] = run
        run = runs[key]
        return {"prepare_seconds": run["prepare_seconds"], "parameters": run["parameters"]}

    def time_steps(words):
        if len(words) not in (3, 4):
            raise ValueError("usage: time MODEL PRECISION STEPS [MODE]")
        name, precision, steps = words[0], words[1], int(words[2])
        mode = words[3] if len(words) == 4 else "eager"
        prepared = prepare([name, precision, mode])
        if "failed" in prepared:
            return prepared
        run = runs[(name, precision, mode)]
        for _ in range(3):
            training_step(torch, F, run, precision)
        synchronize(torch, run)
        start = time.perf_counter()
        for _ in range(steps):
            training_step(torch, F, run, precision)
        synchronize(torch, run)
        return {"samples_per_second": steps * run["batch"] / (time.perf_counter() - start)}

    serve({"prepare": prepare, "time": time_steps})
    return 0


def build_run(torch, nn, F, torchvision, args, name, mode, device):
    """The model, its optimizer and its data on the GPU, as the bench's plugtrain row trains it."""
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r} (one of {', '.join(MODES)})")
    torch.manual_seed(1)
    fmt, clip, vocab = torch.contiguous_format, None, None
    if name == "mlp":
        model = nn.Sequential(nn.Flatten(), nn.Linear(784, 256), nn.ReLU(), nn.Dropout(0.1), nn.Linear(256, 128),
                              nn.ReLU(), nn.Dropout(0.1), nn.Linear(128, 10))
        shape, batch = (1, 28, 28), 100
    elif name == "convnet":
        model, shape, batch, fmt = make_convnet(nn, F), (1, 28, 28), 100, torch.channels_last
    elif name == "resnet18":
        model = torchvision.models.resnet18(num_classes=10)
        model.conv1 = nn.Conv2d(3, 64, kernel_size=3, stride=1, padding=1, bias=False)
        model.maxpool = nn.Identity()
        shape, batch, fmt = (3, 32, 32), 128, torch.channels_last
    elif name == "gpt2":
        if not args.twins:
            raise ValueError("gpt2 needs --twins (the folder of transformer_twins.py)")
        sys.path.insert(0, args.twins)
        from transformer_twins import GPT
        vocab, shape, batch, clip = 50304, (args.gpt_context,), args.gpt_batch, 1.0
        model = GPT(vocab, args.gpt_context, 12, 12, 768)
    else:
        raise ValueError(f"unknown model {name!r}")
    model = model.to(device, memory_format=fmt) if fmt != torch.contiguous_format else model.to(device)
    if name == "resnet18":
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, nesterov=True, weight_decay=5e-4)
    elif name == "gpt2":
        from transformer_twins import nanogpt_adamw
        optimizer = nanogpt_adamw(model)
    else:
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    # The data on the GPU, as plugtrain's data.on_device: a batch is a slice of it.
    if vocab:
        images = torch.randint(0, vocab, (batch * 8, *shape), device=device)
        labels = torch.randint(0, vocab, (batch * 8, *shape), device=device)
    else:
        images = torch.randn(batch * 64, *shape, device=device).contiguous(memory_format=fmt)
        labels = torch.randint(0, 10, (batch * 64,), device=device)
    forward = model if mode == "eager" else torch.compile(model, mode=mode)
    return {"model": model, "forward": forward, "optimizer": optimizer, "images": images, "labels": labels,
            "batch": batch, "i": 0, "clip": clip, "graphs": mode == "reduce-overhead" and device.type == "cuda",
            "parameters": sum(p.numel() for p in model.parameters())}


def make_convnet(nn, F):
    class ConvNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 32, 5, padding=2)
            self.conv2 = nn.Conv2d(32, 64, 5, padding=2)
            self.fc1 = nn.Linear(64 * 7 * 7, 1024)
            self.dropout = nn.Dropout(0.4)
            self.fc2 = nn.Linear(1024, 10)

        def forward(self, x):
            x = F.max_pool2d(F.relu(self.conv1(x)), 2)
            x = F.max_pool2d(F.relu(self.conv2(x)), 2)
            return self.fc2(self.dropout(F.relu(self.fc1(x.flatten(1)))))

    return ConvNet()


def training_step(torch, F, run, precision):
    b, n = run["batch"], run["images"].size(0) // run["batch"]
    i = run["i"] % n
    run["i"] += 1
    x, y = run["images"][i * b:(i + 1) * b], run["labels"][i * b:(i + 1) * b]
    if run["graphs"]:
        torch.compiler.cudagraph_mark_step_begin()  # the previous step's graph outputs are done with
    run["optimizer"].zero_grad(set_to_none=True)
    with torch.autocast(x.device.type, dtype=torch.bfloat16, enabled=precision == "bf16"):
        out = run["forward"](x)
        loss = F.cross_entropy(out.reshape(-1, out.size(-1)), y.reshape(-1))
    loss.backward()
    if run["clip"]:
        torch.nn.utils.clip_grad_norm_(run["model"].parameters(), run["clip"])
    run["optimizer"].step()


def warm_up(torch, F, run, precision):
    """Ten steps: cuDNN's autotuner, and for a compile mode the compilation (and the recording of
    reduce-overhead's CUDA graphs), happen here, outside the timed steps."""
    run["model"].train()
    for _ in range(10):
        training_step(torch, F, run, precision)
    synchronize(torch, run)


def synchronize(torch, run):
    if run["images"].is_cuda:
        torch.cuda.synchronize()


if __name__ == "__main__":
    sys.exit(main())
