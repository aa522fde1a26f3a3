"""The PyTorch peer of bench/transformer_bench.cpp (protocol: bench/python_peer.h).

"add LABEL MODE gpt VOCAB CONTEXT LAYERS HEADS WIDTH BATCH" or "add LABEL MODE vit PATCH WIDTH DEPTH
HEADS BATCH" builds the twin (python/transformer_twins.py: nanoGPT's GPT, plugtrain's ViT) with
AdamW (lr 1e-3, betas (0.9, 0.99), weight decay 0.1 on tensors of two or more dimensions),
gradient clipping at 1, and four random batches; MODE is eager, or compile (torch.compile of the
model, default settings). Answers {"parameters": n}. "step LABEL [N [W]]" trains W untimed steps (0), then N (1; zero_grad,
forward, cross-entropy, backward, clip, step) and answers their mean {"seconds", "cpu_seconds"}.
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
    modules = import_or_skip("torch", "torch.nn.functional")
    if modules is None:
        return 0
    torch, F = modules
    sys.path.insert(0, os.path.abspath(args.twins))
    from transformer_twins import GPT, ViT, nanogpt_adamw

    torch.set_num_threads(args.threads)
    answer({"ready": True, "torch": torch.__version__, "threads": torch.get_num_threads()})
    runs = {}

    def add(words):
        label, mode, kind = words[0], words[1], words[2]
        n = [int(w) for w in words[3:]]
        torch.manual_seed(1)
        if kind == "gpt":
            vocab, context, layers, heads, width, batch = n
            model = GPT(vocab, context, layers, heads, width)
            batches = [(torch.randint(0, vocab, (batch, context)), torch.randint(0, vocab, (batch, context)))
                       for _ in range(4)]
        else:
            patch, width, depth, heads, batch = n
            model = ViT(patch, width, depth, heads, 4.0, 10)
            batches = [(torch.randn(batch, 1, 28, 28), torch.randint(0, 10, (batch,))) for _ in range(4)]
        optimizer = nanogpt_adamw(model)
        forward = torch.compile(model) if mode == "compile" else model
        runs[label] = {"model": model, "forward": forward, "optimizer": optimizer, "batches": batches, "steps": 0}
        return {"parameters": sum(p.numel() for p in model.parameters())}

    def train_one(run):
        x, y = run["batches"][run["steps"] % 4]
        run["steps"] += 1
        run["optimizer"].zero_grad(set_to_none=True)
        logits = run["forward"](x)
        F.cross_entropy(logits.view(-1, logits.size(-1)), y.view(-1)).backward()
        torch.nn.utils.clip_grad_norm_(run["model"].parameters(), 1.0)
        run["optimizer"].step()

    def step(words):
        run = runs[words[0]]
        return timed_steps(words[1:], lambda: train_one(run))

    serve({"add": add, "step": step})
    return 0


if __name__ == "__main__":
    sys.exit(main())
