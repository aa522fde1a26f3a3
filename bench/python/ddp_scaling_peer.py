"""The PyTorch DDP peer of bench/ddp_nodes_bench.cpp (protocol: bench/python_peer.h).

"run MODEL STEPS WARMUP MASTER_ADDR MASTER_PORT PLACE ..." starts one worker process per PLACE (a
network namespace, entered with nsenter, or "-" for this one's): rank r gets RANK, WORLD_SIZE,
LOCAL_RANK (its place among the ranks of the same PLACE), LOCAL_WORLD_SIZE, MASTER_ADDR and
MASTER_PORT, as the plugtrain side's ranks do, and one intra-op thread. Each trains MODEL wrapped in
DistributedDataParallel over gloo, as its users write it:
  mlp  784-256-128-10 with ReLU (plugtrain's mlp), SGD lr 0.05 momentum 0.9, 64 random
       fashion-mnist-shaped samples a rank and step;
  gpt  python/transformer_twins.py's GPT at nanoGPT's CPU shape (vocabulary 65, context 64, 4
       layers, 4 heads, width 128), nanoGPT's AdamW, clipping at 1, 12 windows a rank and step.
WARMUP untimed steps, then STEPS timed (DDP: the backward's all-reduce included), the same STEPS
under no_sync (the computation alone), and STEPS all-reduces alone of one buffer the size of
the gradients. Answers rank 0's {"samples_per_second", "step_ms", "compute_ms", "allreduce_ms"}.
"""

import argparse
import datetime
import json
import os
import subprocess
import sys
import time

from peer_protocol import answer, import_or_skip, serve

BATCH = {"mlp": 64, "gpt": 12}


def build(torch, model_name):
    """The model, its optimizer, the step's loss function and 4 random batches of one rank."""
    torch.manual_seed(1)
    nn = torch.nn
    if model_name == "mlp":
        model = nn.Sequential(nn.Flatten(), nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 128), nn.ReLU(),
                              nn.Linear(128, 10))
        optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
        batches = [(torch.randn(64, 1, 28, 28), torch.randint(0, 10, (64,))) for _ in range(4)]
        return model, optimizer, torch.nn.functional.cross_entropy, batches
    from transformer_twins import GPT, nanogpt_adamw
    model = GPT(65, 64, 4, 4, 128)
    optimizer = nanogpt_adamw(model)
    batches = [(torch.randint(0, 65, (12, 64)), torch.randint(0, 65, (12, 64))) for _ in range(4)]

    def loss(logits, y):
        return torch.nn.functional.cross_entropy(logits.view(-1, logits.size(-1)), y.view(-1))
    return model, optimizer, loss, batches


def worker(model_name, steps, warmup):
    """One rank: the three timings, printed by rank 0 as one JSON line."""
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel
    torch.set_num_threads(1)
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=120))
    model, optimizer, loss_fn, batches = build(torch, model_name)
    ddp = DistributedDataParallel(model)
    clip = model_name == "gpt"

    def step(i):
        x, y = batches[i % len(batches)]
        optimizer.zero_grad(set_to_none=True)
        loss_fn(ddp(x), y).backward()
        if clip:
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()

    def timed(run):
        dist.barrier()
        start = time.perf_counter()
        for i in range(steps):
            run(i)
        dist.barrier()
        return (time.perf_counter() - start) / steps

    for i in range(warmup):
        step(i)
    step_s = timed(step)

    def compute_only(i):
        with ddp.no_sync():
            step(i)
    compute_s = timed(compute_only)
    buffer = torch.zeros(sum(p.numel() for p in model.parameters()))
    allreduce_s = timed(lambda i: dist.all_reduce(buffer))
    if dist.get_rank() == 0:
        world = dist.get_world_size()
        print(json.dumps({"samples_per_second": BATCH[model_name] * world / step_s, "step_ms": step_s * 1e3,
                          "compute_ms": compute_s * 1e3, "allreduce_ms": allreduce_s * 1e3}), flush=True)
    dist.destroy_process_group()


def launch(words, twins):
    """The "run" command: every rank started, rank 0's answer."""
    model_name, steps, warmup, addr, port = words[0], words[1], words[2], words[3], words[4]
    places = words[5:]
    processes = []
    for rank, place in enumerate(places):
        local = [p for p in places[:rank] if p == place]
        env = dict(os.environ, RANK=str(rank), WORLD_SIZE=str(len(places)), LOCAL_RANK=str(len(local)),
                   LOCAL_WORLD_SIZE=str(places.count(place)), MASTER_ADDR=addr, MASTER_PORT=port,
                   OMP_NUM_THREADS="1", PYTHONPATH=os.path.abspath(twins))
        command = [sys.executable, "-u", os.path.abspath(__file__), "--worker", model_name, steps, warmup]
        if place != "-":
            # Gloo binds to what the host name resolves to (127.0.0.1 here) unless told the
            # interface, as a PyTorch user on a cluster must tell it.
            env["GLOO_SOCKET_IFNAME"] = "eth0"
            command = ["nsenter", "--net=/run/netns/" + place] + command
        processes.append(subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                          text=True))
    outputs = [p.communicate()[0] for p in processes]
    for rank, p in enumerate(processes):
        if p.returncode != 0:
            raise RuntimeError(f"rank {rank} exited with {p.returncode}: {outputs[rank].strip()[-400:]}")
    for line in outputs[0].splitlines():
        if line.startswith("{"):
            return json.loads(line)
    raise RuntimeError("rank 0 printed no timings: " + outputs[0].strip()[-400:])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--twins", help="the folder of transformer_twins.py")
    ap.add_argument("--worker", nargs=3, metavar=("MODEL", "STEPS", "WARMUP"))
    args = ap.parse_args()
    if args.worker:
        worker(args.worker[0], int(args.worker[1]), int(args.worker[2]))
        return 0
    modules = import_or_skip("torch", "torch.distributed")
    if modules is None:
        return 0
    torch, dist = modules
    if not dist.is_available() or not dist.is_gloo_available():
        answer({"skipped": "this torch has no gloo"})
        return 0
    answer({"ready": True, "torch": torch.__version__})
    serve("run", lambda words: launch(words, args.twins))
    return 0


if __name__ == "__main__":
    sys.exit(main())
