"""The torchvision peer of bench/zoo_bench.cpp (protocol: bench/python_peer.h).

"add LABEL BATCH SIZE" builds torchvision.models.<name>(num_classes=10) for the bench's row
LABEL (resnet18_cifar: resnet18 with conv1 3x3 stride 1 padding 1 and no max-pool, as
torchvision's users adapt it to CIFAR), channels_last, in train mode, with torch.optim.SGD (lr
0.1, momentum 0.9, Nesterov, weight decay 5e-4) and four synthetic normalised batches of
BATCH x 3 x SIZE x SIZE; it answers {"parameters": n}. "step LABEL" trains one eager step of
that model and answers {"seconds": wall time, "cpu_seconds": this process's CPU time}.

First line: {"ready": true, versions, threads} or {"skipped": reason} without torch or
torchvision. "quit" (or the end of input) ends it.
"""

import argparse
import sys

from peer_protocol import answer, import_or_skip, serve, timed_training_step


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, required=True)
    args = ap.parse_args()
    modules = import_or_skip("torch", "torch.nn.functional", "torchvision")
    if modules is None:
        return 0
    torch, F, torchvision = modules
    torch.set_num_threads(args.threads)
    answer({"ready": True, "torch": torch.__version__, "torchvision": torchvision.__version__,
            "threads": torch.get_num_threads()})

    def build(label):
        if label == "resnet18_cifar":
            model = torchvision.models.resnet18(num_classes=10)
            model.conv1 = torch.nn.Conv2d(3, 64, kernel_size=3, stride=1, padding=1, bias=False)
            model.maxpool = torch.nn.Identity()
            return model
        return getattr(torchvision.models, label)(num_classes=10)

    runs = {}

    def add(words):
        label, batch, size = words[0], int(words[1]), int(words[2])
        torch.manual_seed(1)
        model = build(label).to(memory_format=torch.channels_last)
        model.train()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, nesterov=True, weight_decay=5e-4)
        batches = [(torch.randn(batch, 3, size, size).contiguous(memory_format=torch.channels_last),
                    torch.randint(0, 10, (batch,))) for _ in range(4)]
        runs[label] = {"model": model, "optimizer": optimizer, "batches": batches, "steps": 0}
        return {"parameters": sum(p.numel() for p in model.parameters())}

    def step(words):
        return timed_training_step(runs[words[0]], F.cross_entropy)

    serve({"add": add, "step": step})
    return 0


if __name__ == "__main__":
    sys.exit(main())
