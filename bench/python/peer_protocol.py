"""The peers' side of the protocol in bench/python_peer.h: one JSON line per answer."""

import importlib
import json
import os
import sys
import time

_answers = None


def answer(obj):
    """Writes obj as one JSON line on the bench's pipe. From the first answer on, that pipe holds
    answers alone: what anything else in this process prints to standard output (Inductor's
    autotuning tables, a C library's printf) goes to standard error, so that no line of theirs
    can be read as an answer (a stray "{...}" once was, gpu_step_bench on an H200)."""
    global _answers
    if _answers is None:
        sys.stdout.flush()
        _answers = os.fdopen(os.dup(1), "w")
        os.dup2(2, 1)
        sys.stdout = sys.stderr
    _answers.write(json.dumps(obj) + "\n")
    _answers.flush()


def import_or_skip(*names):
    """The modules `names`, imported in order; when any cannot be imported (torch or torchvision
    missing, or broken), answers {"skipped": reason} for the bench and returns None."""
    try:
        return [importlib.import_module(name) for name in names]
    except Exception as e:  # noqa: BLE001 - any import failure means: no peer
        answer({"skipped": f"{type(e).__name__}: {e}"})
        return None


def serve(command, handle=None):
    """Answers each line of standard input whose first word is `command` with handle(words[1:])
    (a dict), or, with `command` a dict of handlers by first word, with that word's handler;
    "quit" or the end of input ends it; any failure is answered {"error": ...}, after which the
    bench skips the peer."""
    handlers = command if isinstance(command, dict) else {command: handle}
    for line in sys.stdin:
        words = line.split()
        if not words:
            continue
        if words[0] == "quit":
            break
        try:
            if words[0] not in handlers:
                raise ValueError(f"unknown command {line.strip()!r}")
            answer(handlers[words[0]](words[1:]))
        except Exception as e:  # noqa: BLE001 - reported to the bench, which skips the peer
            answer({"error": f"{type(e).__name__}: {e}"})


def timed_training_step(run, loss_fn):
    """One eager training step of run = {"model", "optimizer", "batches", "steps"} on its next
    batch (they cycle): zero_grad(set_to_none=True), loss_fn(model(x), y), backward, step.
    Answers {"seconds": its wall time, "cpu_seconds": the CPU time of all this process's threads}."""
    x, y = run["batches"][run["steps"] % len(run["batches"])]
    run["steps"] += 1
    model, optimizer = run["model"], run["optimizer"]
    cpu = time.process_time()
    start = time.perf_counter()
    optimizer.zero_grad(set_to_none=True)
    loss_fn(model(x), y).backward()
    optimizer.step()
    return {"seconds": time.perf_counter() - start, "cpu_seconds": time.process_time() - cpu}


def timed_steps(words, train_one):
    """"step LABEL [N [W]]" after the label: W untimed calls of train_one() (0: the first step after
    another model's runs with the caches full of that model), then N timed ones (1). Answers their
    mean {"seconds", "cpu_seconds"} (the CPU time of all this process's threads)."""
    count = int(words[0]) if words else 1
    for _ in range(int(words[1]) if len(words) > 1 else 0):
        train_one()
    cpu, start = time.process_time(), time.perf_counter()
    for _ in range(count):
        train_one()
    return {"seconds": (time.perf_counter() - start) / count, "cpu_seconds": (time.process_time() - cpu) / count}
