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
    "not a zip": (lambda d: io.BytesIO(b"hello, not an archive"), "not a complete zip archive"),
    "truncated": (lambda d: io.BytesIO(d[: len(d) // 2]), "not a complete zip archive"),
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
