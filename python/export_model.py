"""Export a PyTorch module as a torch.export .pt2 archive that plugtrain trains ([model] name = "exported").

    python3 python/export_model.py my_net.py:Net --input 3x32x32 --out net.pt2
    python3 python/export_model.py torchvision:resnet18 --input 3x32x32 --args '{"num_classes": 10}' --out resnet18.pt2
    python3 python/export_model.py gpt.py:GPT --input 16 --dtype int64 --vocab 64 --out gpt.pt2

SPEC is FILE.py:CLASS (the class is imported from that file and built as CLASS(**ARGS)) or
torchvision:NAME (torchvision.models.NAME(**ARGS)).

The module is exported in train mode (unless --eval) with torch.export.export and a dynamic
batch dimension, from an example input of shape (BATCH, *INPUT). Train mode matters: the
graph is traced once, and Python code that asks self.training keeps the branch it took then.
Traced in train mode, the graph holds what training needs (batch norm updating its running
statistics, dropout); plugtrain switches the training flags of those operators for evaluation.
The dynamic batch lets one file train and evaluate at any batch size; a model whose code fixes
the batch (x.view(4, -1)) cannot be exported so and is refused.

After saving, the archive is loaded back and run on a batch of another size (BATCH + 1); the
output's shape is compared with the original module's. Printed: the operators the graph uses,
the parameter count, and the [model] lines of the experiment file. Any failure is one line on
stderr and exit status 1.
"""
import argparse
import importlib.util
import json
import os
import sys
import time
import warnings

try:
    import torch
    import torch.utils._pytree as pytree
except ImportError:
    sys.exit("export_model: error: this Python has no torch: run it with the Python that has your model's "
             "torch (scripts/setup's is ~/.cache/plugtrain/venv-torch-2.11.0/bin/python)")


class ExportError(Exception):
    """A failure the user can fix; main prints it as one line."""


def first_line(error):
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def class_from_file(path, class_name):
    if not os.path.isfile(path):
        raise ExportError(f"{path}: file not found")
    module_name = os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise ExportError(f"{path}: not a Python file that can be imported")
    module = importlib.util.module_from_spec(spec)
    # The file's own folder first, so that it can import its neighbours.
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    try:
        spec.loader.exec_module(module)
    except Exception as e:
        raise ExportError(f"{path}: importing it failed: {type(e).__name__}: {first_line(e)}")
    if not hasattr(module, class_name):
        classes = sorted(n for n, v in vars(module).items()
                         if isinstance(v, type) and issubclass(v, torch.nn.Module))
        raise ExportError(f"{path}: no class '{class_name}' (its torch.nn.Module classes: "
                          f"{', '.join(classes) or 'none'})")
    return getattr(module, class_name)


def model_factory(spec):
    """FILE.py:CLASS or torchvision:NAME -> a callable that builds the module."""
    source, sep, name = spec.rpartition(":")
    if not sep or not source or not name:
        raise ExportError(f"'{spec}': expected FILE.py:CLASS or torchvision:NAME")
    if source == "torchvision":
        import torchvision
        if not hasattr(torchvision.models, name):
            raise ExportError(f"'{spec}': torchvision.models has no '{name}'")
        return getattr(torchvision.models, name)
    return class_from_file(source, name)


def parse_shape(text):
    try:
        shape = tuple(int(d) for d in text.lower().split("x"))
    except ValueError:
        shape = ()
    if not shape or any(d < 1 for d in shape):
        raise ExportError(f"--input '{text}': expected positive sizes joined by x, e.g. 3x32x32")
    return shape


def parse_kwargs(text):
    try:
        kwargs = json.loads(text)
    except json.JSONDecodeError as e:
        raise ExportError(f"--args is not valid JSON: {e}")
    if not isinstance(kwargs, dict):
        raise ExportError("--args must be a JSON object, e.g. '{\"num_classes\": 10}'")
    return kwargs


def example_input(args, batch, shape):
    if args.dtype == "int64":
        return torch.randint(0, args.vocab, (batch,) + shape, dtype=torch.int64)
    return torch.randn((batch,) + shape)


def export_module(module, x):
    batch = torch.export.Dim("batch", min=1)
    try:
        return torch.export.export(module, (x,), dynamic_shapes=({0: batch},))
    except Exception as e:
        if "specialized it to be a constant" in str(e):
            raise ExportError(
                f"the model fixes the batch size to {x.shape[0]} (e.g. a view or reshape with the "
                "batch written out): use x.size(0) or -1 so that any batch size works")
        raise ExportError(f"torch.export failed: {type(e).__name__}: {first_line(e)}")


def operator_name(target):
    """aten.conv2d.default for torch.ops.aten.conv2d.default; _operator.mul for Python's."""
    if isinstance(target, torch._ops.OpOverload):
        return str(target)
    return f"{getattr(target, '__module__', '?')}.{getattr(target, '__name__', str(target))}"


def output_shapes(output):
    return [tuple(t.shape) for t in pytree.tree_leaves(output) if isinstance(t, torch.Tensor)]


def check_saved(out, module, x_other):
    """Loads the archive and runs it on another batch size; its output shapes must be the
    module's. Returns the loaded program."""
    try:
        with warnings.catch_warnings():
            # torch.export.load warns that it reads the weights from a read-only buffer: noise.
            warnings.filterwarnings("ignore", message="The given buffer is not writable")
            loaded = torch.export.load(out)
        got = output_shapes(loaded.module()(x_other))
    except Exception as e:
        raise ExportError(f"{out}: loading it back or running it on batch {x_other.shape[0]} "
                          f"failed: {type(e).__name__}: {first_line(e)}")
    with torch.no_grad():
        expected = output_shapes(module(x_other))
    if got != expected:
        raise ExportError(f"{out}: on batch {x_other.shape[0]} the exported graph gives shapes "
                          f"{got}, the module {expected}")
    return loaded, got


def build_module(args):
    factory = model_factory(args.spec)
    kwargs = parse_kwargs(args.args)
    try:
        module = factory(**kwargs)
    except Exception as e:
        raise ExportError(f"{args.spec}: building it with {kwargs} failed: "
                          f"{type(e).__name__}: {first_line(e)}")
    if not isinstance(module, torch.nn.Module):
        raise ExportError(f"{args.spec}: built a {type(module).__name__}, not a torch.nn.Module")
    return module.eval() if args.eval else module.train()


def run(args):
    shape = parse_shape(args.input)
    if args.batch < 2:
        # torch.export treats an example size of 0 or 1 as a constant: no dynamic batch then.
        raise ExportError("--batch must be at least 2 (torch.export fixes a size of 1)")
    if args.dtype == "int64" and (args.vocab is None or args.vocab < 1):
        raise ExportError("--dtype int64 needs --vocab N (the inputs are drawn from 0..N-1)")
    torch.manual_seed(0)
    module = build_module(args)
    x = example_input(args, args.batch, shape)

    start = time.perf_counter()
    ep = export_module(module, x)
    seconds = time.perf_counter() - start
    out = os.path.abspath(args.out)
    try:
        torch.export.save(ep, out)
    except Exception as e:
        raise ExportError(f"{out}: saving failed: {type(e).__name__}: {first_line(e)}")
    loaded, shapes = check_saved(out, module, example_input(args, args.batch + 1, shape))

    operators = sorted({operator_name(n.target) for n in loaded.graph.nodes
                        if n.op == "call_function"})
    parameters = sum(p.numel() for p in loaded.parameters())
    mode = "eval" if args.eval else "train"
    print(f"exported {args.spec} in {mode} mode in {seconds:.1f} s: {out} "
          f"({os.path.getsize(out) / 1e6:.1f} MB)")
    print(f"checked: batch {args.batch + 1} gives output shape(s) "
          f"{', '.join(str(s) for s in shapes)}")
    print(f"parameters: {parameters}")
    print(f"operators ({len(operators)}): {' '.join(operators)}")
    for op in operators:
        if op.startswith("torch.ops.higher_order."):
            print(f"warning: {op} is a higher-order operator (control flow), which plugtrain "
                  "refuses: write the model without it", file=sys.stderr)
    print("\nIn the experiment file:\n[model]\nname = \"exported\"\n"
          f"file = {json.dumps(out)}")


def parse_args(argv):
    parser = argparse.ArgumentParser(
        prog="export_model.py", description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("spec", metavar="SPEC", help="FILE.py:CLASS or torchvision:NAME")
    parser.add_argument("--input", required=True, metavar="SHAPE",
                        help="one sample's shape without the batch, e.g. 3x32x32 or 16")
    parser.add_argument("--out", required=True, help="the .pt2 file to write, e.g. net.pt2")
    parser.add_argument("--dtype", choices=("float32", "int64"), default="float32",
                        help="the input's type: float32 (images, features; the default) or "
                             "int64 (token ids, with --vocab)")
    parser.add_argument("--vocab", type=int, metavar="N",
                        help="with --dtype int64: example inputs are drawn from 0..N-1")
    parser.add_argument("--batch", type=int, default=4,
                        help="the example batch size, at least 2 (default 4); the check runs BATCH + 1")
    parser.add_argument("--args", default="{}", metavar="JSON",
                        help="keyword arguments of the constructor as a JSON object, e.g. "
                             "'{\"num_classes\": 10}'")
    parser.add_argument("--eval", action="store_true",
                        help="export in eval mode: for a model only evaluated. Code that asks "
                             "self.training is traced with False, so what only training does "
                             "(num_batches_tracked updates, attention dropout written as "
                             "dropout_p=p if self.training else 0.0) is left out of the graph")
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    try:
        run(args)
    except ExportError as e:
        print(f"export_model: error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
