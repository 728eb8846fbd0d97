"""``ember.jit.save`` / ``ember.jit.load``: a traced graph as JSON data beside its weights
in an ember checkpoint, in one zip file; loading runs no stored code.

PyTorch counterpart: torch/jit/_serialization.py (v2.13). PyTorch stores TorchScript
source and pickled constants; ember stores the graph as data (NOTE [ The ember-jit
file format ]) and refuses any file that does not follow the format exactly.
"""

import io
import json
import keyword
import math
import operator
import os
import re
import zipfile

from ember.serialization.errors import CheckpointError, describe
from ember.serialization.zip_reader import ZipCheckpoint

# NOTE [ The ember-jit file format ]
# A zip archive (stored, not compressed) with exactly two members:
#   ember_jit/graph.json   {"format": "ember-jit", "version": 1, "class_name": ...,
#                           "nodes": [...]}
#   ember_jit/weights.pt   an ember.save checkpoint of {get_attr path: tensor}
# Each node is {"name", "op", "target", "args", "kwargs"}; op is placeholder, get_attr,
# call_function or output (a traced graph has no others); a call_function target is
# {"op": "aten::name"}, an operator registered in ember, or {"function": "getitem"}.
# Values are JSON with tagged objects for what JSON lacks: {"node": name}, {"tuple":
# [...]}, {"slice": [a, b, c]}, {"float": "inf"}, {"dtype": "float32"}, {"ellipsis":
# true}, {"device": "cpu"}. Loading checks every name is a fresh identifier, every node
# input is defined before use, every op exists and every get_attr has its tensor; the
# weights go through ember.load's restricted unpickler. Code is generated only from
# checked data.

FORMAT = "ember-jit"
VERSION = 1
GRAPH = "ember_jit/graph.json"
WEIGHTS = "ember_jit/weights.pt"
_FUNCTIONS = {"getitem": operator.getitem}
_OPCODES = ("placeholder", "get_attr", "call_function", "output")


class JitFormatError(CheckpointError):
    """A file that is not a valid ember-jit file (truncated, tampered or another format);
    a ``CheckpointError``, as ember.load raises for a bad checkpoint."""


def save(m, f):
    """Write the traced ``GraphModule`` ``m`` (from ``ember.jit.trace``) to ``f`` (a path or a
    writable binary file)."""
    import ember

    graph = {"format": FORMAT, "version": VERSION, "class_name": type(m).__name__,
             "nodes": [_encode_node(n) for n in m.graph.nodes]}
    from ember.fx.graph_module import fetch_attr

    weights = {n.target: fetch_attr(m, n.target).detach() for n in m.graph.nodes if n.op == "get_attr"}
    buffer = io.BytesIO()
    ember.save(weights, buffer)
    data = io.BytesIO()
    with zipfile.ZipFile(data, "w", zipfile.ZIP_STORED) as archive:
        archive.writestr(GRAPH, json.dumps(graph, indent=1))
        archive.writestr(WEIGHTS, buffer.getvalue())
    if isinstance(f, (str, os.PathLike)):
        from ember.serialization.atomic import atomic_write

        with atomic_write(f) as out:
            out.write(data.getvalue())
    else:
        f.write(data.getvalue())


def load(f, map_location=None):
    """Read an ember-jit file into a ``GraphModule``.

    Raises:
        JitFormatError: the file does not follow the format (NOTE [ Loading an ember-jit
            file ]): it names the problem, and comes before any allocation larger than the
            file's content.
    """
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as file:
            return _load(file, map_location)
    if not (hasattr(f, "seekable") and f.seekable()):
        f = io.BytesIO(f.read())
    return _load(f, map_location)


def _load(fileobj, map_location):
    import ember
    from ember.fx import GraphModule

    try:
        archive = ZipCheckpoint(fileobj)
    except CheckpointError as e:
        raise JitFormatError(f"not an ember-jit file: {e}") from None
    names = sorted(f"{archive.prefix}/{name}" for name in archive.names())
    if names != sorted([GRAPH, WEIGHTS]):
        raise JitFormatError(f"not an ember-jit file: expected the members {GRAPH} and {WEIGHTS}, found "
                             f"{describe(names)}")
    description = _read_graph(archive)
    try:
        weights = ember.load(io.BytesIO(archive.read(WEIGHTS.partition("/")[2])), map_location=map_location)
    except CheckpointError as e:  # ember.load's own refusal, kept as the cause
        raise JitFormatError(f"ember-jit weights were refused: {e}") from e
    if not isinstance(weights, dict) or not all(isinstance(k, str) and isinstance(v, ember.Tensor)
                                                for k, v in weights.items()):
        raise JitFormatError("ember-jit weights must be a dict of attribute path -> tensor")
    graph = _decode_graph(description, weights)
    return GraphModule(weights, graph, description["class_name"])


def _read_graph(archive):
    """graph.json, parsed, after checking its size; its depth is checked as it is decoded."""
    member = GRAPH.partition("/")[2]
    if archive.size(member) > MAX_GRAPH_BYTES:
        raise JitFormatError(f"ember-jit graph.json has {archive.size(member):,} bytes; at most {MAX_GRAPH_BYTES:,} "
                             "are read")
    try:
        text = bytes(archive.read(member)).decode("utf-8")
        return json.loads(text)
    except CheckpointError as e:
        raise JitFormatError(f"ember-jit graph.json is damaged: {e}") from None
    except RecursionError:
        raise JitFormatError(f"ember-jit graph.json nests deeper than {MAX_DEPTH} levels") from None
    except ValueError as e:  # UnicodeDecodeError, JSONDecodeError, an integer of too many digits
        raise JitFormatError(f"ember-jit graph.json is not valid JSON: {e}") from None


# --- writing -----------------------------------------------------------------------------


def _encode_node(node):
    if node.op not in _OPCODES:
        raise JitFormatError(f"ember.jit.save: node {node.name} is a {node.op} node; the ember-jit format stores "
                             "traced graphs (placeholder, get_attr, call_function, output): use ember.jit.trace")
    return {"name": node.name, "op": node.op, "target": _encode_target(node),
            "args": [_encode(a) for a in node.args], "kwargs": {k: _encode(v) for k, v in node.kwargs.items()}}


def _encode_target(node):
    if node.op != "call_function":
        return node.target
    qualname = getattr(node.target, "qualname", None)
    if isinstance(qualname, str) and "::" in qualname:
        return {"op": qualname}
    for name, fn in _FUNCTIONS.items():
        if node.target is fn:
            return {"function": name}
    raise JitFormatError(f"ember.jit.save: node {node.name} calls {node.target!r}, which the ember-jit format "
                         "cannot store (only ember ops); trace the module with ember.jit.trace")


def _encode(value):
    import numpy as np

    import ember
    from ember.fx import Node

    if isinstance(value, Node):
        return {"node": value.name}
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value) if math.isfinite(value) else {"float": str(float(value))}
    if isinstance(value, tuple):
        return {"tuple": [_encode(v) for v in value]}
    if isinstance(value, list):
        return [_encode(v) for v in value]
    if isinstance(value, slice):
        return {"slice": [_encode(value.start), _encode(value.stop), _encode(value.step)]}
    if value is Ellipsis:
        return {"ellipsis": True}
    if isinstance(value, ember.dtype):
        return {"dtype": str(value).split(".")[-1]}
    if isinstance(value, np.dtype):
        return {"numpy_dtype": value.name}
    if isinstance(value, np.ndarray) and value.dtype.name in _NUMPY_DTYPES:  # e.g. resample's taps
        return {"array": {"dtype": value.dtype.name, "shape": list(value.shape), "data": value.ravel().tolist()}}
    if isinstance(value, ember.device):
        return {"device": str(value)}
    raise JitFormatError(f"ember.jit.save: cannot store a value of type {type(value).__name__} in a graph")


# --- reading -----------------------------------------------------------------------------

# NOTE [ Loading an ember-jit file ]
# A file is data from anywhere, so loading checks it as ember.load checks a checkpoint,
# and every refusal is one JitFormatError (a CheckpointError: callers of ember.load
# catch it too) naming the problem:
# - the zip archive is read by the checkpoint loader's reader (ZipCheckpoint: stored
#   members only, so no compressed bomb inflates; no overlapping or hidden members;
#   CRC checked), and must hold exactly the two members;
# - graph.json is at most MAX_GRAPH_BYTES and MAX_NODES nodes, and values nest at most
#   MAX_DEPTH levels (the parser's own recursion error, for a deeper file, is caught);
# - every value has the type its place needs before it is used: names are fresh
#   identifiers, inputs are defined before use, ops exist, a dtype or a device is one
#   ember knows, an array's data fits its shape and dtype, one output ends the graph;
# - the weights go through ember.load's restricted unpickler.
# Code is generated only from checked data.

MAX_GRAPH_BYTES = 16 << 20
MAX_NODES = 1 << 15  # 20x the largest zoo graph (resnet152: 1,604 nodes); a loaded node takes ~8 KB at the peak
MAX_DEPTH = 32


def _decode_graph(description, weights):
    from ember.fx import Graph

    if not isinstance(description, dict) or description.get("format") != FORMAT:
        raise JitFormatError("not an ember-jit file: graph.json does not declare the ember-jit format")
    if type(description.get("version")) is not int or description["version"] != VERSION:
        raise JitFormatError(f"unsupported ember-jit version {describe(description.get('version'))} (this ember "
                             f"reads version {VERSION})")
    if not _is_identifier(description.get("class_name")):
        raise JitFormatError("ember-jit graph has no valid class_name")
    nodes = description.get("nodes")
    if not isinstance(nodes, list) or not nodes:
        raise JitFormatError("ember-jit graph has no node list")
    if len(nodes) > MAX_NODES:
        raise JitFormatError(f"ember-jit graph has {len(nodes):,} nodes; at most {MAX_NODES:,} are loaded")
    graph = Graph()
    defined = {}
    for i, entry in enumerate(nodes):
        node = _decode_node(graph, entry, defined, weights, i)
        defined[node.name] = node
        if (node.op == "output") != (i == len(nodes) - 1):
            raise JitFormatError("ember-jit graph must end in its one output node")
    return graph


def _decode_node(graph, entry, defined, weights, index):
    if not isinstance(entry, dict) or set(entry) != {"name", "op", "target", "args", "kwargs"}:
        raise JitFormatError(f"ember-jit node {index} is not a {{name, op, target, args, kwargs}} object")
    name, op, target = entry["name"], entry["op"], entry["target"]
    if not _is_identifier(name) or name in defined:
        raise JitFormatError(f"ember-jit node {index} has an invalid or repeated name {describe(name)}")
    if not isinstance(op, str) or op not in _OPCODES:
        raise JitFormatError(f"ember-jit node {name} has the opcode {describe(op)}; a traced graph has only "
                             f"{_OPCODES}")
    if not isinstance(entry["args"], list) or not isinstance(entry["kwargs"], dict):
        raise JitFormatError(f"ember-jit node {name}: args must be a list and kwargs an object")
    args = tuple(_decode(a, defined, name, 1) for a in entry["args"])
    kwargs = {}
    for key, value in entry["kwargs"].items():
        if not _is_identifier(key):
            raise JitFormatError(f"ember-jit node {name} has an invalid keyword {describe(key)}")
        kwargs[key] = _decode(value, defined, name, 1)
    if op == "placeholder":
        # fx renames an argument that shadows a builtin (`input` -> node input_1, target input)
        if not _is_identifier(target) or args or kwargs:
            raise JitFormatError(f"ember-jit placeholder {name} must have an argument name as target and no "
                                 "arguments")
        return graph.create_node(op, target, name=name)
    if op == "get_attr":
        if not isinstance(target, str) or not all(_is_identifier(a) or a.isdigit() for a in target.split(".")):
            raise JitFormatError(f"ember-jit node {name} reads an invalid attribute {describe(target)}")
        if target not in weights:
            raise JitFormatError(f"ember-jit node {name} reads the weight {target!r}, which the file does not hold")
        return graph.create_node(op, target, name=name)
    if op == "output":
        if len(args) != 1 or kwargs:
            raise JitFormatError("ember-jit output node must have exactly one argument")
        return graph.create_node(op, "output", args, name=name)
    return graph.create_node(op, _decode_target(target, name), args, kwargs, name=name)


def _decode_target(target, name):
    if isinstance(target, dict) and set(target) == {"op"} and isinstance(target["op"], str):
        op = _find_op(target["op"])
        if op is None:
            raise JitFormatError(f"ember-jit node {name} calls the unknown operator {describe(target['op'])} (is the "
                                 "plugin that registers it installed?)")
        return op
    if isinstance(target, dict) and set(target) == {"function"} and isinstance(target["function"], str) \
            and target["function"] in _FUNCTIONS:
        return _FUNCTIONS[target["function"]]
    raise JitFormatError(f"ember-jit node {name} has an invalid call target {describe(target)}")


def _find_op(qualname):
    from ember.dispatcher import _ALL_OPS
    from ember.plugins import registry

    for attempt in range(2):
        for op in _ALL_OPS:
            if op.qualname == qualname:
                return op
        if attempt == 0:
            registry.catalogue("ops")  # discovering plugins registers their ops
    return None


def _decode(value, defined, name, depth):
    import numpy as np

    import ember

    if depth > MAX_DEPTH:
        raise JitFormatError(f"ember-jit node {name} has an argument nested deeper than {MAX_DEPTH} levels")
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, list):
        return [_decode(v, defined, name, depth + 1) for v in value]
    if not isinstance(value, dict) or len(value) != 1:
        raise JitFormatError(f"ember-jit node {name} has an argument of an unknown form: {describe(value)}")
    (tag, inner), = value.items()
    if tag == "node" and isinstance(inner, str):
        if inner not in defined:
            raise JitFormatError(f"ember-jit node {name} reads {describe(inner)}, which is not defined before it")
        return defined[inner]
    if tag == "tuple" and isinstance(inner, list):
        return tuple(_decode(v, defined, name, depth + 1) for v in inner)
    if tag == "slice" and isinstance(inner, list) and len(inner) == 3:
        return slice(*(_decode(v, defined, name, depth + 1) for v in inner))
    if tag == "float" and inner in ("inf", "-inf", "nan"):
        return float(inner)
    if tag == "ellipsis" and inner is True:
        return Ellipsis
    if tag == "dtype" and isinstance(inner, str) and inner in _DTYPES:
        return getattr(ember, inner)
    if tag == "numpy_dtype" and isinstance(inner, str) and inner in _NUMPY_DTYPES:
        return np.dtype(inner)
    if tag == "array":
        return _decode_array(inner, name)
    if tag == "device" and isinstance(inner, str) and re.fullmatch(r"(cpu|cuda)(:[0-9]{1,4})?", inner):
        return ember.device(inner)
    raise JitFormatError(f"ember-jit node {name} has an argument of an unknown form: {describe(value)}")


def _decode_array(inner, name):
    import numpy as np

    if (not isinstance(inner, dict) or set(inner) != {"dtype", "shape", "data"} or not isinstance(inner["dtype"], str)
            or inner["dtype"] not in _NUMPY_DTYPES or not isinstance(inner["shape"], list)
            or not all(type(d) is int and d >= 0 for d in inner["shape"]) or not isinstance(inner["data"], list)
            or not all(type(v) in (int, float, bool) for v in inner["data"])
            or len(inner["data"]) != math.prod(inner["shape"])):
        raise JitFormatError(f"ember-jit node {name} has a malformed array argument")
    try:
        return np.array(inner["data"], dtype=inner["dtype"]).reshape(inner["shape"])
    except (OverflowError, ValueError, TypeError) as e:  # a value outside the dtype's range
        raise JitFormatError(f"ember-jit node {name} has an array whose values do not fit {inner['dtype']}: {e}") \
            from None


_NUMPY_DTYPES = ("bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64")
_DTYPES = ("bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64")


def _is_identifier(name):
    return isinstance(name, str) and name.isidentifier() and not keyword.iskeyword(name) and name != "self"
