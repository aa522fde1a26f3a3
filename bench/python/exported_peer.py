"""The PyTorch peer of bench/exported_bench.cpp (protocol: bench/python_peer.h).

"add LABEL MODE resnet18 BATCH SIZE", "add LABEL MODE gpt VOCAB CONTEXT LAYERS HEADS WIDTH BATCH" or
"add LABEL MODE vit PATCH WIDTH DEPTH HEADS BATCH" builds the model the bench's exported row was
exported from: torchvision's resnet18(num_classes=10), channels_last, with torch.optim.SGD (lr 0.1,
momentum 0.9, Nesterov, weight decay 5e-4), or the twins of python/transformer_twins.py (nanoGPT's
GPT, the ViT) with nanoGPT's AdamW and gradient clipping at 1; four random batches. MODE is eager,
or compile (torch.compile of the model, default settings, compiled in the bench's warm-up).
Answers {"parameters": n}. "step LABEL [N [W]]" trains W untimed steps (0), then N (1; zero_grad, forward, cross-entropy,
backward, clipping for the transformers, step) and answers their mean {"seconds", "cpu_seconds"}.
"""

import argparse
import os
import sys

from peer_protocol import answer, import_or_skip, serve, timed_steps


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, required=True)
    ap.add_argument("--twins", required=True, help="the folder of transformer_twins.py")
    args = ap.parse_args()
    modules = import_or_skip("torch", "torch.nn.functional", "torchvision")
    if modules is None:
        return 0
    torch, F, torchvision = modules
    sys.path.insert(0, os.path.abspath(args.twins))
    from transformer_twins import GPT, ViT, nanogpt_adamw

    torch.set_num_threads(args.threads)
    answer({"ready": True, "torch": torch.__version__, "threads": torch.get_num_threads()})
    runs = {}

    def build(kind, n):
        if kind == "resnet18":
            batch, size = n
            model = torchvision.models.resnet18(num_classes=10).to(memory_format=torch.channels_last)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, nesterov=True, weight_decay=5e-4)
            batches = [(torch.randn(batch, 3, size, size).contiguous(memory_format=torch.channels_last),
                        torch.randint(0, 10, (batch,))) for _ in range(4)]
            return model, optimizer, batches, None
        if kind == "gpt":
            vocab, context, layers, heads, width, batch = n
            model = GPT(vocab, context, layers, heads, width)
            batches = [(torch.randint(0, vocab, (batch, context)), torch.randint(0, vocab, (batch, context)))
                       for _ in range(4)]
        else:
            patch, width, depth, heads, batch = n
            model = ViT(patch, width, depth, heads, 4.0, 10)
            batches = [(torch.randn(batch, 1, 28, 28), torch.randint(0, 10, (batch,))) for _ in range(4)]
        return model, nanogpt_adamw(model), batches, 1.0

    def add(words):
        label, mode, kind = words[0], words[1], words[2]
        torch.manual_seed(1)
        model, optimizer, batches, clip = build(kind, [int(w) for w in words[3:]])
        model.train()
        forward = torch.compile(model) if mode == "compile" else model
        runs[label] = {"model": model, "forward": forward, "optimizer": optimizer, "batches": batches,
                       "clip": clip, "steps": 0}
        return {"parameters": sum(p.numel() for p in model.parameters())}

    def train_one(run):
        x, y = run["batches"][run["steps"] % 4]
        run["steps"] += 1
        run["optimizer"].zero_grad(set_to_none=True)
        logits = run["forward"](x)
        F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1)).backward()
        if run["clip"] is not None:
            torch.nn.utils.clip_grad_norm_(run["model"].parameters(), run["clip"])
        run["optimizer"].step()

    def step(words):
        run = runs[words[0]]
        return timed_steps(words[1:], lambda: train_one(run))

    serve({"add": add, "step": step})
    return 0


if __name__ == "__main__":
    sys.exit(main())
