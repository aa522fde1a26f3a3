"""Python twins of plugtrain's transformers, with the same parameter names, so the weights move both
ways (`plugtrain export` out, model.init in) and a benchmark or test can compare the two.

    GPT(vocab, context, n_layer, n_head, n_embd)   nanoGPT's GPT (model.py): transformer.{wte, wpe,
                                                   h.<i>, ln_f}, lm_head tied to wte
    ViT(patch, width, depth, heads, mlp_ratio, classes, channels=1, side=28)
                                                   plugtrain's vit: patch_embed.proj, cls_token,
                                                   pos_embed, blocks.<i>, norm, head

nanogpt_adamw(model) is the optimizer both sides of a comparison use (plugtrain's
optim.decay = "matrices"). A tied GPT's state_dict has lm_head.weight and transformer.wte.weight as one tensor; plugtrain
registers it once (as transformer.wte.weight), so load an exported GPT with strict=False: the one
missing key is lm_head.weight, which is the embedding itself.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class LayerNorm(nn.Module):
    def __init__(self, ndim, bias=True):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(ndim))
        self.bias = nn.Parameter(torch.zeros(ndim)) if bias else None

    def forward(self, x):
        return F.layer_norm(x, self.weight.shape, self.weight, self.bias, 1e-5)


class SelfAttention(nn.Module):
    def __init__(self, width, heads, causal):
        super().__init__()
        self.c_attn = nn.Linear(width, 3 * width)
        self.c_proj = nn.Linear(width, width)
        self.heads, self.causal = heads, causal

    def forward(self, x):
        b, t, c = x.size()
        q, k, v = self.c_attn(x).split(c, dim=2)
        q = q.view(b, t, self.heads, c // self.heads).transpose(1, 2)
        k = k.view(b, t, self.heads, c // self.heads).transpose(1, 2)
        v = v.view(b, t, self.heads, c // self.heads).transpose(1, 2)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=self.causal)
        return self.c_proj(y.transpose(1, 2).contiguous().view(b, t, c))


class MLP(nn.Module):
    def __init__(self, width, hidden):
        super().__init__()
        self.c_fc = nn.Linear(width, hidden)
        self.gelu = nn.GELU()
        self.c_proj = nn.Linear(hidden, width)

    def forward(self, x):
        return self.c_proj(self.gelu(self.c_fc(x)))


class Block(nn.Module):
    def __init__(self, width, heads, hidden, causal):
        super().__init__()
        self.ln_1 = LayerNorm(width)
        self.attn = SelfAttention(width, heads, causal)
        self.ln_2 = LayerNorm(width)
        self.mlp = MLP(width, hidden)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    """nanoGPT's GPT: transformer.{wte, wpe, h, ln_f} and lm_head tied to wte."""

    def __init__(self, vocab, context, n_layer, n_head, n_embd):
        super().__init__()
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(vocab, n_embd),
            wpe=nn.Embedding(context, n_embd),
            h=nn.ModuleList([Block(n_embd, n_head, 4 * n_embd, True) for _ in range(n_layer)]),
            ln_f=LayerNorm(n_embd),
        ))
        self.lm_head = nn.Linear(n_embd, vocab, bias=False)
        self.transformer.wte.weight = self.lm_head.weight  # nanoGPT's weight tying
        for name, p in self.named_parameters():
            if p.dim() >= 2:
                std = 0.02 / math.sqrt(2 * n_layer) if name.endswith('c_proj.weight') else 0.02
                torch.nn.init.normal_(p, 0.0, std)
            elif name.endswith('bias'):
                torch.nn.init.zeros_(p)

    def forward(self, idx):
        pos = torch.arange(idx.size(1), dtype=torch.long, device=idx.device)  # on the GPU too
        x = self.transformer.wte(idx) + self.transformer.wpe(pos)
        for block in self.transformer.h:
            x = block(x)
        return self.lm_head(self.transformer.ln_f(x))


class PatchEmbed(nn.Module):
    def __init__(self, channels, width, patch):
        super().__init__()
        self.proj = nn.Conv2d(channels, width, patch, stride=patch)

    def forward(self, x):
        return self.proj(x).flatten(2).transpose(1, 2)


class ViT(nn.Module):
    def __init__(self, patch, width, depth, heads, mlp_ratio, classes, channels=1, side=28):
        super().__init__()
        self.patch_embed = PatchEmbed(channels, width, patch)
        self.cls_token = nn.Parameter(torch.zeros(1, 1, width))
        self.pos_embed = nn.Parameter(torch.randn(1, (side // patch) ** 2 + 1, width) * 0.02)
        self.blocks = nn.ModuleList([Block(width, heads, int(round(width * mlp_ratio)), False) for _ in range(depth)])
        self.norm = LayerNorm(width)
        self.head = nn.Linear(width, classes)

    def forward(self, images):
        x = self.patch_embed(images)
        x = torch.cat([self.cls_token.expand(x.size(0), -1, -1), x], dim=1) + self.pos_embed
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x)[:, 0])


def nanogpt_adamw(model, lr=1e-3, betas=(0.9, 0.99), weight_decay=0.1):
    """AdamW as nanoGPT's configure_optimizers makes it: weight decay on tensors of two or more
    dimensions, none on biases and norm scales (plugtrain's optim.decay = "matrices")."""
    params = list(model.parameters())  # tied parameters once, as named_parameters dedupes
    return torch.optim.AdamW([{"params": [p for p in params if p.dim() >= 2], "weight_decay": weight_decay},
                              {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0}],
                             lr=lr, betas=betas)
