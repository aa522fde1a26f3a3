"""Reference fixtures for the C++ test of the `exported` model (torch.export .pt2 archives).

For each model M this writes DIR/M.pt2 (the module exported in train mode with a dynamic batch
dimension) and DIR/M_reference.pt (a flat {name: tensor} dict for torch::pickle_load): the data,
20 training steps' losses under SGD and AdamW from the exported weights, the eval-mode loss and
the full state_dict after each run, and the initial state.

    python exported_reference.py --out DIR --models resnet18,mobilenet_v3_small,vit,gpt [--threads 1]

Everything runs on the CPU in float32. Before every forward the global seed is set to
1000 + step, so a C++ run that does the same draws the same dropout masks.
"""
import argparse
import copy
import os
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision

STEPS = 20
BATCH = 8
EXAMPLE_BATCH = 4  # the batch size the export traces with; training uses BATCH (dynamic dim)
IMAGE_SHAPE = (3, 32, 32)
NUM_CLASSES = 10
VOCAB, BLOCK, N_EMBD, N_HEAD, N_LAYER, GPT_DROPOUT = 64, 16, 32, 2, 2, 0.1


class CausalSelfAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.c_attn = nn.Linear(N_EMBD, 3 * N_EMBD)
        self.c_proj = nn.Linear(N_EMBD, N_EMBD)
        self.resid_dropout = nn.Dropout(GPT_DROPOUT)
        self.dropout = GPT_DROPOUT

    def forward(self, x):
        b, t, c = x.size()  # b is the symbolic batch in the exported graph
        q, k, v = self.c_attn(x).split(N_EMBD, dim=2)
        q = q.view(b, t, N_HEAD, c // N_HEAD).transpose(1, 2)
        k = k.view(b, t, N_HEAD, c // N_HEAD).transpose(1, 2)
        v = v.view(b, t, N_HEAD, c // N_HEAD).transpose(1, 2)
        # Traced in train mode, so the graph holds dropout_p = 0.1 as a constant.
        y = F.scaled_dot_product_attention(
            q, k, v, is_causal=True, dropout_p=self.dropout if self.training else 0.0)
        y = y.transpose(1, 2).contiguous().view(b, t, c)
        return self.resid_dropout(self.c_proj(y))


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.c_fc = nn.Linear(N_EMBD, 4 * N_EMBD)
        self.gelu = nn.GELU()
        self.c_proj = nn.Linear(4 * N_EMBD, N_EMBD)
        self.dropout = nn.Dropout(GPT_DROPOUT)

    def forward(self, x):
        return self.dropout(self.c_proj(self.gelu(self.c_fc(x))))


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln_1 = nn.LayerNorm(N_EMBD)
        self.attn = CausalSelfAttention()
        self.ln_2 = nn.LayerNorm(N_EMBD)
        self.mlp = MLP()

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class TinyGPT(nn.Module):
    """nanoGPT in miniature. No weight tying between wte and lm_head: tying would make one
    parameter appear under two names, which keeps the fixture simpler without it."""

    def __init__(self):
        super().__init__()
        self.wte = nn.Embedding(VOCAB, N_EMBD)
        self.wpe = nn.Embedding(BLOCK, N_EMBD)
        self.drop = nn.Dropout(GPT_DROPOUT)
        self.h = nn.ModuleList([Block() for _ in range(N_LAYER)])
        self.ln_f = nn.LayerNorm(N_EMBD)
        self.lm_head = nn.Linear(N_EMBD, VOCAB, bias=False)

    def forward(self, idx):
        pos = torch.arange(idx.size(1), dtype=torch.long, device=idx.device)
        x = self.drop(self.wte(idx) + self.wpe(pos))
        for block in self.h:
            x = block(x)
        return self.lm_head(self.ln_f(x))


def build_model(name):
    if name == "resnet18":
        return torchvision.models.resnet18(num_classes=NUM_CLASSES)
    if name == "mobilenet_v3_small":  # keeps its classifier's Dropout(p=0.2)
        return torchvision.models.mobilenet_v3_small(num_classes=NUM_CLASSES)
    if name == "vit":
        return torchvision.models.VisionTransformer(
            image_size=32, patch_size=8, num_layers=2, num_heads=2, hidden_dim=32, mlp_dim=64,
            num_classes=NUM_CLASSES)
    if name == "gpt":
        return TinyGPT()
    raise ValueError(f"unknown model '{name}' (known: resnet18, mobilenet_v3_small, vit, gpt)")


def make_data(name):
    """inputs (STEPS, BATCH, ...), targets, eval_inputs (BATCH, ...), eval_targets: drawn in this
    order from one generator seeded 123."""
    gen = torch.Generator().manual_seed(123)
    if name != "gpt":
        inputs = torch.randn((STEPS, BATCH) + IMAGE_SHAPE, generator=gen)
        targets = torch.randint(0, NUM_CLASSES, (STEPS, BATCH), generator=gen)
        eval_inputs = torch.randn((BATCH,) + IMAGE_SHAPE, generator=gen)
        eval_targets = torch.randint(0, NUM_CLASSES, (BATCH,), generator=gen)
        return inputs, targets, eval_inputs, eval_targets

    def tokens_and_next(leading):
        tokens = torch.randint(0, VOCAB, leading + (BLOCK,), generator=gen)
        following = torch.empty_like(tokens)
        following[..., :-1] = tokens[..., 1:]
        following[..., -1] = torch.randint(0, VOCAB, leading, generator=gen)
        return tokens, following

    inputs, targets = tokens_and_next((STEPS, BATCH))
    eval_inputs, eval_targets = tokens_and_next((BATCH,))
    return inputs, targets, eval_inputs, eval_targets


def example_input(name):
    if name == "gpt":
        return torch.zeros((EXAMPLE_BATCH, BLOCK), dtype=torch.long)
    return torch.randn((EXAMPLE_BATCH,) + IMAGE_SHAPE)


def loss_of(logits, targets):
    return F.cross_entropy(logits.reshape(-1, logits.size(-1)), targets.reshape(-1))


def operator_name(target):
    """aten.conv2d.default for torch.ops.aten.conv2d.default; _operator.mul for Python's."""
    if isinstance(target, torch._ops.OpOverload):
        return str(target)
    return f"{getattr(target, '__module__', '?')}.{getattr(target, '__name__', str(target))}"


def graph_operators(ep):
    return sorted({operator_name(n.target) for n in ep.graph.nodes if n.op == "call_function"})


def make_optimizer(kind, module):
    if kind == "sgd":
        return torch.optim.SGD(module.parameters(), lr=0.01, momentum=0.9, weight_decay=5e-4,
                               foreach=False)
    return torch.optim.AdamW(module.parameters(), lr=1e-3, betas=(0.9, 0.999), eps=1e-8,
                             weight_decay=0.01, foreach=False)


def train_run(module, kind, data):
    """STEPS optimizer steps; returns (losses float64 (STEPS,), eval loss float64 0-d, state)."""
    inputs, targets, eval_inputs, eval_targets = data
    opt = make_optimizer(kind, module)
    losses = []
    for step in range(STEPS):
        torch.manual_seed(1000 + step)  # the dropout draws of this step
        loss = loss_of(module(inputs[step]), targets[step])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    module.eval()
    with torch.no_grad():
        eval_loss = loss_of(module(eval_inputs), eval_targets).item()
    module.train()
    state = {k: v.detach().clone().contiguous() for k, v in module.state_dict().items()}
    return (torch.tensor(losses, dtype=torch.float64),
            torch.tensor(eval_loss, dtype=torch.float64), state)


def export_to(module, name, path):
    """Exports with a dynamic batch and saves; returns (program, seconds)."""
    start = time.perf_counter()
    ep = torch.export.export(module, (example_input(name),),
                             dynamic_shapes=({0: torch.export.Dim("batch", min=1)},))
    seconds = time.perf_counter() - start
    torch.export.save(ep, path)
    return ep, seconds


def same_state(a, b):
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def reference_for(name, out_dir, threads):
    start = time.perf_counter()
    torch.manual_seed(0)
    module = build_model(name).train()
    init = copy.deepcopy(module.state_dict())
    ep, export_seconds = export_to(module, name, os.path.join(out_dir, f"{name}.pt2"))
    # The archive must hold exactly the weights the runs start from.
    if not same_state(dict(ep.state_dict), init):
        raise RuntimeError(f"{name}: the exported state_dict differs from the module's")
    module.load_state_dict(init)

    data = make_data(name)
    record = dict(zip(("inputs", "targets", "eval_inputs", "eval_targets"), data))
    record["threads"] = torch.tensor(threads, dtype=torch.int64)
    record.update({f"init/{k}": v for k, v in init.items()})
    for kind in ("sgd", "adamw"):
        module.load_state_dict(init)
        losses, eval_loss, state = train_run(module, kind, data)
        record[f"{kind}_losses"] = losses
        record[f"{kind}_eval_loss"] = eval_loss
        record.update({f"{kind}_final/{k}": v for k, v in state.items()})
    record = {k: v.detach().clone().contiguous() for k, v in record.items()}
    torch.save(record, os.path.join(out_dir, f"{name}_reference.pt"))

    parameters = sum(p.numel() for p in module.parameters())
    print(f"{name}: {parameters} parameters, export {export_seconds:.2f} s "
          f"(all {time.perf_counter() - start:.1f} s), operators: {' '.join(graph_operators(ep))}",
          flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True, help="folder for M.pt2 and M_reference.pt")
    parser.add_argument("--models", default="resnet18,mobilenet_v3_small,vit,gpt",
                        help="comma-separated: resnet18, mobilenet_v3_small, vit, gpt")
    parser.add_argument("--threads", type=int, default=1, help="torch.set_num_threads (default 1)")
    args = parser.parse_args()
    models = [m for m in args.models.split(",") if m]
    unknown = [m for m in models if m not in ("resnet18", "mobilenet_v3_small", "vit", "gpt")]
    if unknown or args.threads < 1:
        print(f"exported_reference: unknown model(s) {unknown} or --threads < 1", file=sys.stderr)
        return 1
    os.makedirs(args.out, exist_ok=True)
    torch.set_num_threads(args.threads)
    for name in models:
        reference_for(name, args.out, args.threads)
    return 0


if __name__ == "__main__":
    sys.exit(main())
