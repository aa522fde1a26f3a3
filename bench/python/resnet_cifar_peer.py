"""The Python PyTorch peer of bench/resnet_cifar_bench.cpp (protocol: bench/python_peer.h).

torchvision's ResNet-18 in its CIFAR form (conv1 3x3 stride 1 padding 1, max-pool replaced by
Identity; 10 classes), trained in eager mode with SGD (lr 0.1, momentum 0.9, Nesterov, weight
decay 5e-4) in fp32 on synthetic normalised 3x32x32 batches: one model in channels_last
(model.to(memory_format=torch.channels_last), inputs too) and one contiguous (NCHW).

First line: {"ready": true, versions, threads, parameters} or {"skipped": reason} when torch
or torchvision cannot be imported. Then for each line "step channels_last" or "step
contiguous": one training step of that model, answered {"seconds": its wall time,
"cpu_seconds": the CPU time of all this process's threads over it}.
"quit" (or the end of input) ends it.
"""

import argparse
import sys

from peer_protocol import answer, import_or_skip, serve, timed_training_step


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, required=True)
    ap.add_argument("--batch", type=int, default=128)
    args = ap.parse_args()
    modules = import_or_skip("torch", "torch.nn.functional", "torchvision")
    if modules is None:
        return 0
    torch, F, torchvision = modules

    torch.set_num_threads(args.threads)

    def make(memory_format):
        torch.manual_seed(1)
        model = torchvision.models.resnet18(num_classes=10)
        model.conv1 = torch.nn.Conv2d(3, 64, kernel_size=3, stride=1, padding=1, bias=False)
        model.maxpool = torch.nn.Identity()
        parameters = sum(p.numel() for p in model.parameters())
        model = model.to(memory_format=memory_format)
        model.train()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, nesterov=True, weight_decay=5e-4)
        batches = [(torch.randn(args.batch, 3, 32, 32).contiguous(memory_format=memory_format),
                    torch.randint(0, 10, (args.batch,))) for _ in range(4)]
        return {"model": model, "optimizer": optimizer, "batches": batches, "steps": 0, "parameters": parameters}

    runs = {"channels_last": make(torch.channels_last), "contiguous": make(torch.contiguous_format)}
    answer({"ready": True, "torch": torch.__version__, "torchvision": torchvision.__version__,
            "threads": torch.get_num_threads(), "parameters": runs["contiguous"]["parameters"]})

    def step(args_):
        if len(args_) != 1 or args_[0] not in runs:
            raise ValueError("usage: step channels_last|contiguous")
        return timed_training_step(runs[args_[0]], F.cross_entropy)

    serve("step", step)
    return 0


if __name__ == "__main__":
    sys.exit(main())
