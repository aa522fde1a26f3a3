"""The PyTorch FSDP2 side of bench/fsdp_bench.cpp: nanoGPT's GPT (python/transformer_twins.py)
trained by PROCESSES ranks on the CPU over Gloo, each transformer block and then the root wrapped
with torch.distributed.fsdp.fully_shard (FSDP2, ZeRO-3: parameters resharded after forward), with
the recipe of the plugtrain run it is compared with: AdamW (lr 1e-3, betas (0.9, 0.99), weight
decay 0.1 on tensors of two or more dimensions), gradient clipping at 1, BATCH windows of CONTEXT
random tokens per rank, one intra-op thread per rank.

    python fsdp2_peer.py --processes 2 --vocab 154 --context 64 --layers 4 --heads 4 --width 128 \
        --batch 12 --steps 40 --warmup 5 --twins python

Prints one JSON line: {"tokens_per_second": global tokens over the timed steps' wall time,
"peak_rss_bytes": [each rank's peak resident set], "torch": version}, or {"skipped": reason}.
"""

import argparse
import json
import os
import resource
import socket
import sys
import time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rank_main(rank, args, port, results):
    import torch
    import torch.distributed as dist
    import torch.nn.functional as F
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import fully_shard

    sys.path.insert(0, os.path.abspath(args.twins))
    from transformer_twins import GPT, nanogpt_adamw

    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=args.processes)
    mesh = init_device_mesh("cpu", (args.processes,))
    torch.manual_seed(1)
    model = GPT(args.vocab, args.context, args.layers, args.heads, args.width)
    for block in model.transformer.h:
        fully_shard(block, mesh=mesh)
    fully_shard(model, mesh=mesh)
    optimizer = nanogpt_adamw(model)
    generator = torch.Generator().manual_seed(100 + rank)
    batches = [(torch.randint(0, args.vocab, (args.batch, args.context), generator=generator),
                torch.randint(0, args.vocab, (args.batch, args.context), generator=generator)) for _ in range(4)]

    def step(i):
        x, y = batches[i % 4]
        optimizer.zero_grad(set_to_none=True)
        logits = model(x)
        F.cross_entropy(logits.view(-1, logits.size(-1)), y.view(-1)).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()

    for i in range(args.warmup):
        step(i)
    dist.barrier()
    start = time.perf_counter()
    for i in range(args.steps):
        step(i)
    dist.barrier()
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    results.put((rank, seconds, peak, torch.__version__))
    dist.destroy_process_group()


def main():
    ap = argparse.ArgumentParser()
    for name in ("processes", "vocab", "context", "layers", "heads", "width", "batch", "steps", "warmup"):
        ap.add_argument("--" + name, type=int, required=True)
    ap.add_argument("--twins", required=True, help="the folder of transformer_twins.py")
    args = ap.parse_args()
    try:
        import torch.multiprocessing as mp
        from torch.distributed.fsdp import fully_shard  # noqa: F401 - FSDP2 must be there
    except Exception as e:  # noqa: BLE001 - no torch, or one without FSDP2: no peer
        print(json.dumps({"skipped": f"{type(e).__name__}: {e}"}), flush=True)
        return 0
    context = mp.get_context("spawn")
    results = context.Queue()
    port = free_port()
    ranks = [context.Process(target=rank_main, args=(r, args, port, results)) for r in range(args.processes)]
    for p in ranks:
        p.start()
    got = [results.get(timeout=900) for _ in ranks]
    for p in ranks:
        p.join()
    got.sort()
    seconds = max(g[1] for g in got)
    tokens = args.steps * args.batch * args.context * args.processes
    print(json.dumps({"tokens_per_second": tokens / seconds, "peak_rss_bytes": [g[2] for g in got],
                      "torch": got[0][3]}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
