"""Hand-made hostile .pt2 archives, each one fault, made from real exports (fuzz/corpus/pt2:
linear_relu.pt2, torch.export.save of Linear(4, 3) + ReLU, and conv_bn_view.pt2, Conv2d(1, 2) +
BatchNorm2d + ReLU + view + Linear(32, 3) on 1x4x4, both with a dynamic batch) with zipfile and
json only: no torch, so it runs in a blink. tests/models/exported_untrusted_test.cpp reads them.

    bad_archives.py --seeds fuzz/corpus/pt2 --out DIR
"""
import argparse
import json
import os
import zipfile


def read_seed(path):
    with zipfile.ZipFile(path) as z:
        return [(info.filename, z.read(info.filename)) for info in z.infolist()]


def write(path, records, deflate=()):
    with zipfile.ZipFile(path, "w") as z:
        for name, data in records:
            method = zipfile.ZIP_DEFLATED if any(name.endswith(d) for d in deflate) else zipfile.ZIP_STORED
            z.writestr(zipfile.ZipInfo(name), data, compress_type=method)


def with_model(records, change):
    """The records with models/model.json changed by change(model)."""
    out = []
    for name, data in records:
        if name.endswith("models/model.json"):
            model = json.loads(data)
            change(model)
            data = json.dumps(model).encode()
        out.append((name, data))
    return out


def with_weights_config(records, change):
    out = []
    for name, data in records:
        if name.endswith("data/weights/model_weights_config.json"):
            config = json.loads(data)
            change(config["config"])
            data = json.dumps(config).encode()
        out.append((name, data))
    return out


def graph(model):
    return model["graph_module"]["graph"]


def size_nodes(*nodes):
    """Appends nodes of integer arithmetic on the batch size (the interpreter's size nodes)."""
    def change(model):
        graph(model)["nodes"].extend(nodes)
    return change


def sym(name):
    return {"as_sym_int": {"as_name": name}}


def node(target, name, args, output=None):
    inputs = [{"name": f"a{i}", "arg": a, "kind": 1} for i, a in enumerate(args)]
    outputs = [{"as_sym_int": {"as_name": output or name}}]
    return {"target": target, "inputs": inputs, "outputs": outputs, "name": name, "metadata": {}}


BATCH = node("torch.ops.aten.sym_size.int", "batch", [{"as_tensor": {"name": "x"}}, {"as_int": 0}])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    seed = read_seed(os.path.join(args.seeds, "linear_relu.pt2"))
    conv = read_seed(os.path.join(args.seeds, "conv_bn_view.pt2"))
    out = lambda name: os.path.join(args.out, name)
    os.makedirs(args.out, exist_ok=True)

    # 64 MiB of JSON whitespace deflated into ~64 KiB: a record claiming 1,000 times the file.
    bomb = [(n, d + b" " * (64 << 20) if n.endswith("models/model.json") else d) for n, d in seed]
    write(out("zip_bomb.pt2"), bomb, deflate=("models/model.json",))
    # weight_0 (fc.weight, 3x4 float32) cut from 48 bytes to 20.
    write(out("short_weight.pt2"), [(n, d[:20] if n.endswith("weights/weight_0") else d) for n, d in seed])
    deep = b"[" * 10000 + b"]" * 10000
    write(out("deep_json.pt2"), [(n, deep if n.endswith("models/model.json") else d) for n, d in seed])

    def read_missing(model):
        graph(model)["nodes"][1]["inputs"][0]["arg"] = {"as_tensor": {"name": "nothing_defines_this"}}
    write(out("missing_input.pt2"), with_model(seed, read_missing))
    divide = node("_operator.floordiv", "floordiv", [sym("batch"), {"as_sym_int": {"as_int": 0}}])
    write(out("divide_by_constant_zero.pt2"), with_model(seed, size_nodes(BATCH, divide)))
    # batch - batch is 0 only when it runs: the division reaches the interpreter (in a model the
    # synthetic data set's 1x4x4 images fit, for a run of `plugtrain run`).
    zero = node("_operator.sub", "zero", [sym("batch"), sym("batch")])
    write(out("divide_by_zero_at_run.pt2"),
          with_model(conv, size_nodes(BATCH, zero, node("_operator.floordiv", "floordiv", [sym("batch"), sym("zero")]))))
    write(out("size_node_without_arguments.pt2"),
          with_model(seed, size_nodes(node("torch.ops.aten.sym_size.int", "size", []))))

    def strides(config):
        config["fc.weight"]["tensor_meta"]["strides"] = [{"as_int": 1}]
    write(out("strides_mismatch.pt2"), with_weights_config(seed, strides))

    def overflow(config):
        config["fc.weight"]["tensor_meta"]["sizes"] = [{"as_int": 1 << 62}, {"as_int": 4}]
        config["fc.weight"]["tensor_meta"]["strides"] = [{"as_int": 4}, {"as_int": 1}]
    write(out("shape_overflow.pt2"), with_weights_config(seed, overflow))

    def empty_mutation(model):
        model["graph_module"]["signature"]["output_specs"].append(
            {"buffer_mutation": {"arg": {"name": ""}, "buffer_name": "fc.weight"}})
    write(out("buffer_mutation_without_value.pt2"), with_model(seed, empty_mutation))

    # Overflow that only shows when it runs: batch * 2^62.
    write(out("overflow_at_run.pt2"),
          with_model(conv, size_nodes(BATCH, node("_operator.mul", "mul", [sym("batch"), {"as_sym_int": {"as_int": 1 << 62}}]))))

    def stride_zero(config):  # 4,000 floats viewed in a record of 12
        config["fc.weight"]["tensor_meta"]["sizes"] = [{"as_int": 1000}, {"as_int": 4}]
        config["fc.weight"]["tensor_meta"]["strides"] = [{"as_int": 0}, {"as_int": 1}]
    write(out("stride_zero_weight.pt2"), with_weights_config(seed, stride_zero))

    # 2,000 weights each viewing all of one 1 MiB record: 2 GiB of copies from a 1.6 MB file.
    def one_record_many_weights(config):
        config["fc.weight"]["tensor_meta"]["sizes"] = [{"as_int": 1 << 18}]
        config["fc.weight"]["tensor_meta"]["strides"] = [{"as_int": 1}]
        config.update({f"copy{i}": config["fc.weight"] for i in range(2000)})
    big = [(n, bytes(1 << 20) if n.endswith("weights/weight_0") else d) for n, d in seed]
    write(out("one_record_many_weights.pt2"), with_weights_config(big, one_record_many_weights))

    def reads_files(model):
        graph(model)["nodes"].append({"target": "torch.ops.aten.from_file.default", "name": "steal", "inputs": [
            {"name": "filename", "arg": {"as_string": "/etc/passwd"}, "kind": 1}],
            "outputs": [{"as_tensor": {"name": "stolen"}}], "metadata": {}})
    write(out("reads_files.pt2"), with_model(seed, reads_files))

    def huge_factory(model):
        graph(model)["nodes"].append({"target": "torch.ops.aten.zeros.default", "name": "zeros", "inputs": [
            {"name": "size", "arg": {"as_ints": [1 << 20, 1 << 20]}, "kind": 1}],
            "outputs": [{"as_tensor": {"name": "big"}}], "metadata": {}})
    write(out("huge_factory.pt2"), with_model(seed, huge_factory))

    def bad_constant(model):
        model["graph_module"]["signature"]["input_specs"].append({"constant_input": {"name": "c", "value": 5}})
    write(out("bad_constant_input.pt2"), with_model(seed, bad_constant))

    def bad_target(model):
        model["graph_module"]["signature"]["input_specs"][0]["parameter"]["parameter_name"] = "fc..weight"
    write(out("bad_weight_name.pt2"), with_model(seed, bad_target))

    def newline_name(model):
        graph(model)["nodes"][1]["name"] = "re\nlu"
        graph(model)["nodes"][1]["inputs"][0]["arg"] = {"as_tensor": {"name": "nowhere\nelse"}}
    write(out("newline_in_names.pt2"), with_model(seed, newline_name))

    def many_nodes(model):
        graph(model)["nodes"] = [{}] * 250_001
    write(out("too_many_nodes.pt2"), with_model(seed, many_nodes))

    def many_weights(config):
        config.update({f"w{i}": {} for i in range(100_001)})
    write(out("too_many_weights.pt2"), with_weights_config(seed, many_weights))


if __name__ == "__main__":
    main()
