"""The Python PyTorch peer of bench/image_pipeline_bench.cpp (protocol: bench/python_peer.h).

torchvision.datasets.ImageFolder (PIL loader) on <root>/train with the CIFAR-style training
transforms RandomCrop(size, padding=4), RandomHorizontalFlip(), ToTensor(), Normalize(mean, std),
through a DataLoader(batch_size, shuffle=True, num_workers=N).

First line: {"ready": true, images, versions} or {"skipped": reason} when torch, torchvision or
Pillow cannot be imported. Then for each line "epoch N": one epoch with N workers, timed from
creating the iterator (the worker processes start there, as in every epoch of a training loop
without persistent workers) to the last batch, answered {"seconds": ..., "first_batch_seconds":
...}. "quit" (or the end of input) ends it.
"""

import argparse
import os
import sys
import time

from peer_protocol import answer, import_or_skip, serve


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", required=True)
    ap.add_argument("--threads", type=int, required=True)
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--size", type=int, default=64)
    ap.add_argument("--mean", default="0.485,0.456,0.406")
    ap.add_argument("--std", default="0.229,0.224,0.225")
    args = ap.parse_args()
    modules = import_or_skip("PIL", "torch", "torchvision", "torchvision.datasets", "torchvision.transforms")
    if modules is None:
        return 0
    PIL, torch, torchvision, datasets, transforms = modules

    torch.set_num_threads(args.threads)
    mean = [float(v) for v in args.mean.split(",")]
    std = [float(v) for v in args.std.split(",")]
    transform = transforms.Compose([
        transforms.RandomCrop(args.size, padding=4),
        transforms.RandomHorizontalFlip(),
        transforms.ToTensor(),
        transforms.Normalize(mean, std),
    ])
    dataset = datasets.ImageFolder(os.path.join(args.root, "train"), transform=transform)
    answer({"ready": True, "images": len(dataset), "torch": torch.__version__,
            "torchvision": torchvision.__version__, "pillow": PIL.__version__,
            "image_backend": torchvision.get_image_backend()})

    def epoch(args_):
        if len(args_) != 1:
            raise ValueError("usage: epoch WORKERS")
        loader = torch.utils.data.DataLoader(dataset, batch_size=args.batch, shuffle=True, num_workers=int(args_[0]))
        start = time.perf_counter()
        first = None
        seen = 0
        for inputs, targets in loader:
            if first is None:
                first = time.perf_counter() - start
            seen += inputs.shape[0]
        seconds = time.perf_counter() - start
        if seen != len(dataset):
            raise RuntimeError(f"the DataLoader gave {seen} of {len(dataset)} images")
        return {"seconds": seconds, "first_batch_seconds": first}

    serve("epoch", epoch)
    return 0


if __name__ == "__main__":
    sys.exit(main())
