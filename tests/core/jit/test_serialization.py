"""ember.jit.save / ember.jit.load: round trips, and hostile or damaged files refused with
a clear error (NOTE [ The ember-jit file format ]).

PyTorch counterpart: test/jit/test_save_load.py (v2.13).
"""

import io
import json
import pickle
import zipfile

import numpy as np
import pytest

import ember
import ember.jit as jit
from ember.jit._serialization import GRAPH, WEIGHTS


@pytest.fixture(scope="module")
def saved():
    ember.manual_seed(0)
    model = ember.zoo.create_model("resnet8_cifar").eval()
    x = ember.randn(2, 3, 32, 32)
    buffer = io.BytesIO()
    jit.save(jit.trace(model, x), buffer)
    return model, x, buffer.getvalue()


def test_round_trip_through_a_file(saved, tmp_path):
    model, x, data = saved
    path = tmp_path / "resnet.ejit"
    path.write_bytes(data)
    loaded = jit.load(path)
    np.testing.assert_array_equal(loaded(x).detach().numpy(), model(x).detach().numpy())
    again = io.BytesIO()
    jit.save(loaded, again)
    np.testing.assert_array_equal(jit.load(io.BytesIO(again.getvalue()))(x).detach().numpy(),
                                  model(x).detach().numpy())


def test_the_graph_is_plain_json(saved):
    _, _, data = saved
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        graph = json.loads(archive.read(GRAPH))
    assert graph["format"] == "ember-jit" and graph["version"] == 1
    assert graph["nodes"][0] == {"name": "x", "op": "placeholder", "target": "x", "args": [], "kwargs": {}}
    conv = next(n for n in graph["nodes"] if n["op"] == "call_function")
    assert conv["target"] == {"op": "aten::convolution"}
    assert conv["kwargs"]["stride"] == {"tuple": [1, 1]}


def _rewrite(data, graph=None, weights=None, extra=None):
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        members = {GRAPH: archive.read(GRAPH), WEIGHTS: archive.read(WEIGHTS)}
    if graph is not None:
        members[GRAPH] = json.dumps(graph(json.loads(members[GRAPH]))).encode()
    if weights is not None:
        members[WEIGHTS] = weights
    members.update(extra or {})
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for name, content in members.items():
            archive.writestr(name, content)
    return io.BytesIO(out.getvalue())


def _edit_node(op_name, change):
    def edit(graph):
        node = next(n for n in graph["nodes"] if n["op"] == op_name)
        change(node)
        return graph
    return edit


def _malicious_pickle():
    class Evil:
        def __reduce__(self):
            return (print, ("pwned",))

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("archive/data.pkl", pickle.dumps(Evil(), protocol=2))
        archive.writestr("archive/version", "3\n")
    return buffer.getvalue()


HOSTILE = {
    "not a zip": (lambda d: io.BytesIO(b"hello, not an archive"), "not an ember-jit file: not a zip"),
    "truncated": (lambda d: io.BytesIO(d[: len(d) // 2]), "not an ember-jit file: not a zip"),
    "extra member": (lambda d: _rewrite(d, extra={"ember_jit/run.py": b"import os"}), "expected the members"),
    "bad json": (lambda d: _rewrite(d, graph=None, extra={GRAPH: b"{not json"}), "not valid JSON"),
    "other format": (lambda d: _rewrite(d, graph=lambda g: {**g, "format": "torchscript"}),
                     "does not declare the ember-jit format"),
    "future version": (lambda d: _rewrite(d, graph=lambda g: {**g, "version": 99}), "unsupported ember-jit version"),
    "code in a name": (lambda d: _rewrite(d, graph=_edit_node("call_function", lambda n: n.update(
        name="x; import os"))), "invalid or repeated name"),
    "code in a class name": (lambda d: _rewrite(d, graph=lambda g: {**g, "class_name": "A(object): pass\n"}),
                             "no valid class_name"),
    "code in a keyword": (lambda d: _rewrite(d, graph=_edit_node("call_function", lambda n: n["kwargs"].update(
        {"a=__import__('os')": 1}))), "invalid keyword"),
    "unknown op": (lambda d: _rewrite(d, graph=_edit_node("call_function", lambda n: n.update(
        target={"op": "os::system"}))), "unknown operator 'os::system'"),
    "any python function": (lambda d: _rewrite(d, graph=_edit_node("call_function", lambda n: n.update(
        target={"function": "eval"}))), "invalid call target"),
    "call_module": (lambda d: _rewrite(d, graph=_edit_node("call_function", lambda n: n.update(op="call_module"))),
                    "opcode 'call_module'"),
    "use before definition": (lambda d: _rewrite(d, graph=_edit_node("call_function", lambda n: n["args"].__setitem__(
        0, {"node": "fc"}))), "not defined before it"),
    "missing weight": (lambda d: _rewrite(d, graph=_edit_node("get_attr", lambda n: n.update(target="nowhere"))),
                       "which the file does not hold"),
    "unknown value form": (lambda d: _rewrite(d, graph=_edit_node("call_function", lambda n: n["args"].append(
        {"pickle": "gASV"}))), "unknown form"),
    "pickled code in the weights": (lambda d: _rewrite(d, weights=_malicious_pickle()), "weights were refused"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_and_damaged_files_are_refused(saved, case, capsys):
    make, message = HOSTILE[case]
    with pytest.raises(jit.JitFormatError, match=message):
        jit.load(make(saved[2]))
    assert "pwned" not in capsys.readouterr().out


def test_a_graph_that_is_not_traced_cannot_be_saved():
    gm = ember.fx.symbolic_trace(ember.nn.Linear(2, 2))
    with pytest.raises(jit.JitFormatError, match="only ember ops|cannot store"):
        jit.save(gm, io.BytesIO())


# --- crafted files (NOTE [ Loading an ember-jit file ]) ---------------------------------------


def _archive(graph_bytes, weights=b"", compress_type=zipfile.ZIP_STORED):
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compress_type) as archive:
        archive.writestr(GRAPH, graph_bytes)
        archive.writestr(WEIGHTS, weights)
    return out.getvalue()


def _bomb():
    """A graph.json that DEFLATE shrinks 1000-fold: 64 MiB of spaces in about 64 KB."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        with archive.open(zipfile.ZipInfo(GRAPH), "w") as member:
            for _ in range(64):
                member.write(b" " * (1 << 20))
        archive.writestr(WEIGHTS, b"")
    return out.getvalue()


def _unknown_method(data):
    """Every member's compression method (local and central headers) set to 99."""
    data = bytearray(data)
    for signature, offset in ((b"PK\x03\x04", 8), (b"PK\x01\x02", 10)):
        start = 0
        while (start := data.find(signature, start)) >= 0:
            data[start + offset:start + offset + 2] = (99).to_bytes(2, "little")
            start += 4
    return bytes(data)


def _graph(saved_data, change):
    with zipfile.ZipFile(io.BytesIO(saved_data)) as archive:
        graph = json.loads(archive.read(GRAPH))
        weights = archive.read(WEIGHTS)
    return _archive(change(graph) if not isinstance(change, bytes) else change, weights)


def _node(kind, change):
    def edit(graph):
        change(next(n for n in graph["nodes"] if n["op"] == kind))
        return json.dumps(graph).encode()
    return edit


def _array_arg(array):
    return _node("call_function", lambda n: n["args"].append({"array": array}))


CRAFTED = {
    "empty file": (lambda d: b"", "the file is empty"),
    "truncated directory": (lambda d: d[:-10], "not a zip"),
    "deflate bomb": (lambda d: _bomb(), "is compressed"),
    "unknown compression method": (lambda d: _unknown_method(d), "method 99"),
    "deep nesting": (lambda d: _graph(d, b"[" * 200_000 + b"]" * 200_000), "nests deeper"),
    "deep argument": (lambda d: _graph(d, _node("call_function", lambda n: n["args"].append(
        json.loads("[" * 40 + "]" * 40)))), "nested deeper than 32"),
    "huge node count": (lambda d: _graph(d, lambda g: json.dumps({**g, "nodes": [{}] * 70_000}).encode()),
                        "70,000 nodes"),
    "huge graph": (lambda d: _graph(d, b" " * (17 << 20)), "at most 16,777,216"),
    "huge integer": (lambda d: _graph(d, b"[" + b"9" * 5000 + b"]"), "not valid JSON"),
    "not utf-8": (lambda d: _graph(d, b"\xff\xfe{}"), "not valid JSON"),
    "graph is a list": (lambda d: _graph(d, lambda g: b"[]"), "does not declare the ember-jit format"),
    "version is a string": (lambda d: _graph(d, lambda g: json.dumps({**g, "version": "1"}).encode()),
                            "unsupported ember-jit version"),
    "no nodes key": (lambda d: _graph(d, lambda g: json.dumps({k: v for k, v in g.items() if k != "nodes"})
                                      .encode()), "no node list"),
    "node without kwargs": (lambda d: _graph(d, _node("call_function", lambda n: n.pop("kwargs"))),
                            "is not a {name, op, target, args, kwargs} object"),
    "name is a number": (lambda d: _graph(d, _node("call_function", lambda n: n.update(name=5))),
                         "invalid or repeated"),
    "opcode is a list": (lambda d: _graph(d, _node("call_function", lambda n: n.update(op=["output"]))), "opcode"),
    "args is an object": (lambda d: _graph(d, _node("call_function", lambda n: n.update(args={}))),
                          "args must be a list"),
    "function target is a list": (lambda d: _graph(d, _node("call_function", lambda n: n.update(
        target={"function": ["getitem"]}))), "invalid call target"),
    "op target is a number": (lambda d: _graph(d, _node("call_function", lambda n: n.update(target={"op": 7}))),
                              "invalid call target"),
    "unknown op target": (lambda d: _graph(d, _node("call_function", lambda n: n.update(
        target={"op": "aten::no_such_op"}))), "unknown operator 'aten::no_such_op'"),
    "node reference is a list": (lambda d: _graph(d, _node("call_function", lambda n: n["args"].__setitem__(
        0, {"node": ["x"]}))), "unknown form"),
    "dtype is a list": (lambda d: _graph(d, _node("call_function", lambda n: n["args"].append(
        {"dtype": ["float32"]}))), "unknown form"),
    "dtype names a module": (lambda d: _graph(d, _node("call_function", lambda n: n["args"].append(
        {"dtype": "nn"}))), "unknown form"),
    "bad device": (lambda d: _graph(d, _node("call_function", lambda n: n["args"].append(
        {"device": "cuda:x"}))), "unknown form"),
    "array shape overflows int64": (lambda d: _graph(d, _array_arg(
        {"dtype": "float32", "shape": [2**32, 2**32], "data": []})), "malformed array"),
    "array value out of range": (lambda d: _graph(d, _array_arg(
        {"dtype": "uint8", "shape": [1], "data": [300]})), "do not fit uint8"),
    "placeholder target is code": (lambda d: _graph(d, _node("placeholder", lambda n: n.update(
        target="x=__import__('os')"))), "argument name as target"),
    "no output node": (lambda d: _graph(d, lambda g: json.dumps({**g, "nodes": g["nodes"][:-1]}).encode()),
                       "end in its one output node"),
    "a node after the output": (lambda d: _graph(d, lambda g: json.dumps({**g, "nodes": g["nodes"] + [
        {"name": "late", "op": "placeholder", "target": "late", "args": [], "kwargs": {}}]}).encode()),
        "end in its one output node"),
    "weights are not a dict": (lambda d: _archive(_graph_bytes(d), _weights_of([ember.ones(1)])),
                               "dict of attribute path -> tensor"),
}


def _graph_bytes(data):
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return archive.read(GRAPH)


def _weights_of(obj):
    buffer = io.BytesIO()
    ember.save(obj, buffer)
    return buffer.getvalue()


@pytest.mark.parametrize("case", sorted(CRAFTED))
def test_crafted_files_are_refused_quickly_and_without_large_allocation(saved, case):
    import time
    import tracemalloc

    make, message = CRAFTED[case]
    data = make(saved[2])
    tracemalloc.start()
    start = time.perf_counter()
    try:
        with pytest.raises(jit.JitFormatError, match=message):
            jit.load(io.BytesIO(data))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert time.perf_counter() - start < 30  # no inflating, no runaway loop (each takes well under a second)
    assert peak < 4 * len(data) + (16 << 20)  # a few times the file at most, never what it declares


def test_a_jit_format_error_is_a_checkpoint_error_and_the_cli_prints_it_as_one_line():
    from ember.cli import user_errors
    from ember.serialization.errors import CheckpointError

    assert issubclass(jit.JitFormatError, CheckpointError) and issubclass(jit.JitFormatError, user_errors())


def _forward_with_input():
    class Double(ember.nn.Module):
        def forward(self, input):
            return input * 2 + input.sum()
    return Double()


@pytest.mark.parametrize("make, shape", [
    (lambda: ember.nn.Sequential(ember.nn.Linear(4, 8), ember.nn.ReLU(), ember.nn.Linear(8, 3)), (2, 4)),
    (_forward_with_input, (3,)),
    (lambda: ember.zoo.create_model("gpt_nano").eval(), None),
    (lambda: ember.zoo.create_model("char_lstm_small").eval(), None),
], ids=["Sequential", "argument named input", "gpt_nano", "char_lstm_small"])
def test_every_traceable_module_saves_and_loads_with_identical_outputs(make, shape):
    from ember.onnx.commands import example_inputs

    ember.manual_seed(0)
    model = make()
    if shape is None:
        name = type(model).__name__
        info = next(ember.zoo.model_info(n) for n in ("gpt_nano", "char_lstm_small")
                    if type(ember.zoo.create_model(n)).__name__ == name)
        inputs, _ = example_inputs(model, info, 2)
    else:
        inputs = (ember.randn(*shape),)
    buffer = io.BytesIO()
    with ember.no_grad():
        jit.save(jit.trace(model, inputs), buffer)
        loaded = jit.load(io.BytesIO(buffer.getvalue()))
        want, got = model(*inputs), loaded(*inputs)
    want = want if isinstance(want, tuple) else (want,)
    got = got if isinstance(got, tuple) else (got,)
    for w, g in zip(want, got):
        np.testing.assert_array_equal(g.numpy(), w.numpy())
