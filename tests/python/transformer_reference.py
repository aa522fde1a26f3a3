"""Python twins of the zoo's transformers, for the llm.c-style parity test (tests/models/language_model_test.cpp).

    python transformer_reference.py gpt --data DIR --out DIR [--threads 1]
    python transformer_reference.py vit --data DIR --out DIR [--threads 1]

gpt: nanoGPT's GPT (python/transformer_twins.py, tied embeddings) at a small size. The data is the test's
tokens folder (train.bin, uint16): the batch is every window of CONTEXT tokens of train.bin,
which is CONTEXT + BATCH tokens long, with the tokens that follow as targets.
vit: the zoo's ViT with the same parameter names. The data is the test's IDX files (the
Fashion-MNIST layout): every training image, scaled to [0, 1], is the batch.

Each writes OUT/init.pt (torch.save of the initial state_dict, which plugtrain starts from
through model.init) and OUT/losses.json: the loss of each of STEPS full-batch AdamW steps in
float32 on the CPU (lr 1e-3, betas (0.9, 0.99), weight decay 0.1 on tensors of two or more
dimensions only, nanoGPT's configure_optimizers).
"""
import argparse
import gzip
import json
import os
import struct
import sys

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
from transformer_twins import GPT, ViT, nanogpt_adamw  # noqa: E402

STEPS = 10
VOCAB, CONTEXT, BATCH = 50, 16, 8
GPT_SIZE = dict(n_layer=2, n_head=2, n_embd=32)
VIT_SIZE = dict(patch=7, width=32, depth=2, heads=2, mlp_ratio=2.0, classes=10)


def gpt_batch(data_dir):
    tokens = torch.from_numpy(np.fromfile(os.path.join(data_dir, 'train.bin'), dtype=np.uint16).astype(np.int64))
    assert tokens.numel() == CONTEXT + BATCH, tokens.numel()
    x = torch.stack([tokens[i:i + CONTEXT] for i in range(BATCH)])
    y = torch.stack([tokens[i + 1:i + 1 + CONTEXT] for i in range(BATCH)])
    return x, y


def idx_array(path):
    with gzip.open(path) if path.endswith('.gz') else open(path, 'rb') as f:
        data = f.read()
    dims = data[3]
    shape = struct.unpack('>' + 'I' * dims, data[4:4 + 4 * dims])
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * dims).reshape(shape)


def vit_batch(data_dir):
    images = idx_array(os.path.join(data_dir, 'train-images-idx3-ubyte'))
    labels = idx_array(os.path.join(data_dir, 'train-labels-idx1-ubyte'))
    x = torch.from_numpy(images.astype(np.float32) / 255.0).unsqueeze(1)
    return x, torch.from_numpy(labels.astype(np.int64))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('model', choices=['gpt', 'vit'])
    parser.add_argument('--data', required=True)
    parser.add_argument('--out', required=True)
    parser.add_argument('--threads', type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(1234)
    if args.model == 'gpt':
        model, (x, y) = GPT(VOCAB, CONTEXT, **GPT_SIZE), gpt_batch(args.data)
    else:
        model, (x, y) = ViT(**VIT_SIZE), vit_batch(args.data)
    os.makedirs(args.out, exist_ok=True)
    torch.save(model.state_dict(), os.path.join(args.out, 'init.pt'))
    optimizer = nanogpt_adamw(model)
    losses = []
    for _ in range(STEPS):
        logits = model(x)
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), y.view(-1), ignore_index=-1)
        losses.append(loss.item())
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
    with open(os.path.join(args.out, 'losses.json'), 'w') as f:
        json.dump({'losses': losses}, f)
    torch.save(model.state_dict(), os.path.join(args.out, 'final.pt'))


if __name__ == '__main__':
    main()
