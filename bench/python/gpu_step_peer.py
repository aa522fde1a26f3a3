"""The Python PyTorch peer of bench/gpu_step_bench.cpp (protocol: bench/python_peer.h).

PyTorch eager on CUDA with the data on the GPU, the same models and recipes as the bench's
plugtrain rows: the MLP 784-256-128-10 (ReLU, dropout 0.1) and the convnet (conv 5x5 32 and 64
channels, 2x2 max-pools, fc 1024, dropout 0.4) with Adam lr 1e-3 (PyTorch's default form on
CUDA: foreach) at batch 100 on 1x28x28; ResNet-18 in its CIFAR form (torchvision, conv1 3x3
stride 1, no max-pool) with SGD lr 0.1 momentum 0.9 Nesterov weight decay 5e-4 at batch 128 on
3x32x32. Convolutional models and inputs in channels_last; TF32 as PyTorch's defaults
(convolutions yes, matmul no); bf16 through torch.autocast.

First line: {"ready": true, versions, device} or {"skipped": reason} without torch, torchvision
or a CUDA device. Then for each line "time MODEL PRECISION STEPS": STEPS training steps after a
warm-up, ended by one torch.cuda.synchronize(), answered {"samples_per_second": ...}.
"""

import sys
import time

from peer_protocol import answer, import_or_skip, serve


def main():
    modules = import_or_skip("torch", "torch.nn", "torch.nn.functional", "torchvision")
    if modules is None:
        return 0
    torch, nn, F, torchvision = modules
    if not torch.cuda.is_available():
        answer({"skipped": "torch.cuda.is_available() is False"})
        return 0
    device = torch.device("cuda")
    torch.backends.cudnn.benchmark = True

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

    def make(name):
        torch.manual_seed(1)
        if name == "mlp":
            model = nn.Sequential(nn.Flatten(), nn.Linear(784, 256), nn.ReLU(), nn.Dropout(0.1), nn.Linear(256, 128),
                                  nn.ReLU(), nn.Dropout(0.1), nn.Linear(128, 10))
            shape, batch, fmt = (1, 28, 28), 100, torch.contiguous_format
        elif name == "convnet":
            model, shape, batch, fmt = ConvNet(), (1, 28, 28), 100, torch.channels_last
        else:
            model = torchvision.models.resnet18(num_classes=10)
            model.conv1 = nn.Conv2d(3, 64, kernel_size=3, stride=1, padding=1, bias=False)
            model.maxpool = nn.Identity()
            shape, batch, fmt = (3, 32, 32), 128, torch.channels_last
        model = model.to(device, memory_format=fmt)
        if name == "resnet18":
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, nesterov=True, weight_decay=5e-4)
        else:
            optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
        # The data on the GPU, as plugtrain's data.on_device: a batch is a slice of it.
        images = torch.randn(batch * 64, *shape, device=device).contiguous(memory_format=fmt)
        labels = torch.randint(0, 10, (batch * 64,), device=device)
        return {"model": model, "optimizer": optimizer, "images": images, "labels": labels, "batch": batch, "i": 0}

    runs = {}

    def step(run, precision):
        b, i = run["batch"], run["i"] % 64
        run["i"] += 1
        x, y = run["images"][i * b:(i + 1) * b], run["labels"][i * b:(i + 1) * b]
        run["optimizer"].zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=precision == "bf16"):
            loss = F.cross_entropy(run["model"](x), y)
        loss.backward()
        run["optimizer"].step()

    answer({"ready": True, "torch": torch.__version__, "torchvision": torchvision.__version__,
            "device": torch.cuda.get_device_name()})
    def time_steps(args_):
        if len(args_) != 3:
            raise ValueError("usage: time MODEL PRECISION STEPS")
        name, precision, steps = args_[0], args_[1], int(args_[2])
        run = runs.setdefault(name, make(name))
        run["model"].train()
        for _ in range(10):
            step(run, precision)
        torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(steps):
            step(run, precision)
        torch.cuda.synchronize()
        return {"samples_per_second": steps * run["batch"] / (time.perf_counter() - start)}

    serve("time", time_steps)
    return 0


if __name__ == "__main__":
    sys.exit(main())
