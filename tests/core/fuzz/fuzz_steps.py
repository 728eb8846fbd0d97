"""The catalogue of steps a fuzzed program is made of (see fuzz_programs.py).

PyTorch counterpart: none (torch is the oracle; the ops are torch's public API).

A step draws its parameters from the shapes of the torch side (Hypothesis ``data``)
and returns ``Step(label, fn, operands, inplace)``: ``fn(lib, *tensors)`` runs the same
call in ember and in torch. Parameters are drawn a little beyond what is valid
(out-of-range dims, shapes that do not broadcast) so that raise/no-raise is fuzzed
too. Each family is one function; ``STEPS`` lists them with their weights.
"""

import operator
from typing import Callable, NamedTuple

import numpy as np
from fuzz_programs import DTYPES, dim_of, scalar
from hypothesis import strategies as st


class Step(NamedTuple):
    label: str
    fn: Callable
    operands: tuple
    inplace: bool = False
    # False: the result is compared but not added to the pool (a reduced-precision layer
    # may end a rounding step from torch's, which later steps could magnify)
    reusable: bool = True


def _pick(data, pool, label="x"):
    return data.draw(st.sampled_from(pool), label=label)


# --- views --------------------------------------------------------------------------


def view_step(data, pool):
    x = _pick(data, pool)
    n = len(x.shape)
    kind = data.draw(st.sampled_from(["transpose", "permute", "unsqueeze", "squeeze", "narrow", "select", "expand",
                                      "view", "reshape", "flatten", "movedim", "t", "T", "unbind", "split",
                                      "chunk", "slice", "unflatten"]), label="view")
    if kind == "transpose":
        d0, d1 = dim_of(data, n), dim_of(data, n)
        return Step(f"{x.name}.transpose({d0}, {d1})", lambda lib, a: a.transpose(d0, d1), (x,))
    if kind == "permute":
        perm = tuple(data.draw(st.permutations(range(n)), label="perm"))
        return Step(f"{x.name}.permute({perm})", lambda lib, a: a.permute(perm), (x,))
    if kind == "unsqueeze":
        d = data.draw(st.integers(-n - 1, n), label="dim")
        return Step(f"{x.name}.unsqueeze({d})", lambda lib, a: a.unsqueeze(d), (x,))
    if kind == "squeeze":
        if data.draw(st.booleans(), label="all"):
            return Step(f"{x.name}.squeeze()", lambda lib, a: a.squeeze(), (x,))
        d = dim_of(data, n)
        return Step(f"{x.name}.squeeze({d})", lambda lib, a: a.squeeze(d), (x,))
    if kind in ("narrow", "select", "unbind", "split", "chunk"):
        d = dim_of(data, n)
        size = x.shape[d] if n else 1
        if kind == "narrow":
            start = data.draw(st.integers(-size, size), label="start")
            length = data.draw(st.integers(0, size), label="length")
            return Step(f"{x.name}.narrow({d}, {start}, {length})", lambda lib, a: a.narrow(d, start, length), (x,))
        if kind == "select":
            i = data.draw(st.integers(-size, max(size - 1, 0)), label="index")
            return Step(f"{x.name}.select({d}, {i})", lambda lib, a: a.select(d, i), (x,))
        if kind == "unbind":
            return Step(f"{x.name}.unbind({d})", lambda lib, a: a.unbind(d), (x,))
        k = data.draw(st.integers(1, 3), label="k")
        if kind == "split":
            return Step(f"{x.name}.split({k}, {d})", lambda lib, a: a.split(k, d), (x,))
        return Step(f"{x.name}.chunk({k}, {d})", lambda lib, a: a.chunk(k, d), (x,))
    if kind == "expand":
        shape = [data.draw(st.sampled_from([s, 3, -1]), label="size") if s == 1 else
                 data.draw(st.sampled_from([s, -1]), label="size") for s in x.shape]
        if data.draw(st.booleans(), label="lead"):
            shape = [2] + shape
        return Step(f"{x.name}.expand({shape})", lambda lib, a: a.expand(*shape), (x,))
    if kind in ("view", "reshape"):
        shape = _new_shape(data, x.shape)
        return Step(f"{x.name}.{kind}({shape})", lambda lib, a: getattr(a, kind)(shape), (x,))
    if kind == "flatten":
        s, e = dim_of(data, n, "start"), dim_of(data, n, "end")
        return Step(f"{x.name}.flatten({s}, {e})", lambda lib, a: a.flatten(s, e), (x,))
    if kind == "unflatten":
        d = dim_of(data, n)
        size = x.shape[d] if n else 1
        sizes = (1, size) if data.draw(st.booleans(), label="order") else (size, -1)
        return Step(f"{x.name}.unflatten({d}, {sizes})", lambda lib, a: a.unflatten(d, sizes), (x,))
    if kind == "movedim":
        s, e = dim_of(data, n, "source"), dim_of(data, n, "destination")
        return Step(f"{x.name}.movedim({s}, {e})", lambda lib, a: a.movedim(s, e), (x,))
    if kind == "t":
        return Step(f"{x.name}.t()", lambda lib, a: a.t(), (x,))
    if kind == "T":
        return Step(f"{x.name}.mT", lambda lib, a: a.mT, (x,))
    key = basic_key(data, x.shape)
    return Step(f"{x.name}[{key}]", lambda lib, a: a[key], (x,))


def _new_shape(data, shape):
    numel = 1
    for s in shape:
        numel *= s
    choice = data.draw(st.sampled_from(["flat", "split", "same", "bad"]), label="reshape")
    if choice == "flat":
        return (-1,)
    if choice == "split" and numel and numel % 2 == 0:
        return (2, -1)
    if choice == "bad":
        return (numel + 1,)
    return tuple(shape)


def basic_key(data, shape):
    """A key of ints, slices (any step > 0), None and Ellipsis."""
    key = []
    dims = list(shape)
    used_ellipsis = False
    for size in dims:
        kind = data.draw(st.sampled_from(["int", "slice", "full", "none", "ellipsis"]), label="key")
        if kind == "int":
            key.append(data.draw(st.integers(-size, size), label="i") if size else 0)
        elif kind == "slice":
            start = data.draw(st.none() | st.integers(-size - 1, size + 1), label="start")
            stop = data.draw(st.none() | st.integers(-size - 1, size + 1), label="stop")
            step = data.draw(st.none() | st.integers(1, 3), label="step")
            key.append(slice(start, stop, step))
        elif kind == "none":
            key.extend([None, slice(None)])
        elif kind == "ellipsis" and not used_ellipsis:
            used_ellipsis = True
            key.append(Ellipsis)
            break
        else:
            key.append(slice(None))
    return tuple(key)


# --- indexing ---------------------------------------------------------------------


def advanced_key(data, lib_free_shape):
    """A key mixing ints, slices, None, lists, int tensors, bool masks; built per library
    (index tensors belong to one library), so it is returned as ``make(lib)``."""
    parts = []
    for size in lib_free_shape:
        kind = data.draw(st.sampled_from(["int", "slice", "list", "tensor", "mask", "none", "range"]),
                         label="akey")
        if kind == "int":
            i = data.draw(st.integers(-size, max(size - 1, 0)), label="i")
            parts.append(("int", i))
        elif kind == "slice":
            parts.append(("slice", slice(data.draw(st.none() | st.integers(0, 2), label="start"), None,
                                         data.draw(st.none() | st.integers(1, 2), label="step"))))
        elif kind in ("list", "tensor", "range"):
            n = data.draw(st.integers(0, 3), label="n")
            values = data.draw(st.lists(st.integers(-size, max(size - 1, 0)), min_size=n, max_size=n), label="idx")
            if kind == "range":
                parts.append(("range", range(0, size, 2)))
            else:
                parts.append((kind, values))
        elif kind == "mask":
            parts.append(("mask", data.draw(st.lists(st.booleans(), min_size=size, max_size=size), label="mask")))
        else:
            parts.append(("none", None))
    if not parts:
        parts.append(("mask", [data.draw(st.booleans(), label="mask0")]))  # a 0-d bool mask on a 0-d tensor

    def make(lib):
        key = []
        for kind, value in parts:
            if kind == "tensor":
                key.append(lib.tensor(value, dtype=lib.int64))
            elif kind == "mask":
                key.append(lib.tensor(value) if len(value) != 1 or lib_free_shape else lib.tensor(value[0]))
            else:
                key.append(value)
        return tuple(key)

    return parts, make


def getitem_step(data, pool):
    x = _pick(data, pool)
    parts, make = advanced_key(data, x.shape)
    return Step(f"{x.name}[{parts}]", lambda lib, a: a[make(lib)], (x,))


def setitem_step(data, pool):
    x = _pick(data, pool)
    if data.draw(st.booleans(), label="basic"):
        key = basic_key(data, x.shape)
        parts, make = key, lambda lib: key
    else:
        parts, make = advanced_key(data, x.shape)
    if data.draw(st.booleans(), label="tensor_value"):
        v = _pick(data, pool, "value")

        def write(lib, a, b):
            a[make(lib)] = b
            return a
        return Step(f"{x.name}[{parts}] = {v.name}", write, (x, v), inplace=True)
    s = scalar(data)

    def write_scalar(lib, a):
        a[make(lib)] = s
        return a
    return Step(f"{x.name}[{parts}] = {s!r}", write_scalar, (x,), inplace=True)


# --- in-place -------------------------------------------------------------------------


INPLACE = ["add_", "sub_", "mul_", "div_", "clamp_", "zero_", "fill_", "copy_", "masked_fill_", "neg_", "abs_",
           "exp_", "sigmoid_", "pow_", "t_"]


def inplace_step(data, pool):
    x = _pick(data, pool)
    name = data.draw(st.sampled_from(INPLACE), label="inplace")
    if name in ("zero_", "neg_", "abs_", "exp_", "sigmoid_"):
        return Step(f"{x.name}.{name}()", lambda lib, a: getattr(a, name)(), (x,), inplace=True)
    if name == "clamp_":
        lo, hi = scalar(data), scalar(data)
        return Step(f"{x.name}.clamp_({lo}, {hi})", lambda lib, a: a.clamp_(lo, hi), (x,), inplace=True)
    if name == "masked_fill_":
        s = scalar(data)
        return Step(f"{x.name}.masked_fill_({x.name} > 0, {s})",
                    lambda lib, a: a.masked_fill_(a.detach() > 0, s), (x,), inplace=True)
    if name == "t_":
        return Step(f"{x.name}.t_()", lambda lib, a: a.t_(), (x,), inplace=True)
    if name == "fill_" or data.draw(st.booleans(), label="scalar_operand"):
        s = scalar(data)
        return Step(f"{x.name}.{name}({s!r})", lambda lib, a: getattr(a, name)(s), (x,), inplace=True)
    y = _pick(data, pool, "other")
    return Step(f"{x.name}.{name}({y.name})", lambda lib, a, b: getattr(a, name)(b), (x, y), inplace=True)


# --- promotion: binary ops over every dtype pair and Python scalars ------------------


BINARY = ["add", "sub", "mul", "div", "floor_divide", "remainder", "pow", "eq", "ne", "lt", "ge", "maximum",
          "minimum", "bitwise_and", "bitwise_or", "logical_and", "atan2", "where"]


def binary_step(data, pool):
    x = _pick(data, pool)
    name = data.draw(st.sampled_from(BINARY), label="binary")
    form = data.draw(st.sampled_from(["tensor", "scalar", "rscalar", "operator", "array", "array_operator",
                                      "array_roperator"]), label="form")
    if name == "where":
        y = _pick(data, pool, "other")
        s = scalar(data)
        return Step(f"where({x.name} > 0, {y.name}, {s!r})",
                    lambda lib, a, b: lib.where(a.detach() > 0, b, s), (x, y))
    if form == "tensor":
        y = _pick(data, pool, "other")
        return Step(f"{name}({x.name}, {y.name})", lambda lib, a, b: getattr(lib, name)(a, b), (x, y))
    s = scalar(data)
    if form == "array":  # a 0-d NumPy array is no Number: the functions refuse it (TypeError)
        return Step(f"{name}({x.name}, np.array({s!r}))", lambda lib, a: getattr(lib, name)(a, np.array(s)), (x,))
    if form == "scalar":
        return Step(f"{name}({x.name}, {s!r})", lambda lib, a: getattr(lib, name)(a, s), (x,))
    symbol = {"add": "+", "sub": "-", "mul": "*", "div": "/", "floor_divide": "//", "remainder": "%",
              "pow": "**", "lt": "<", "ge": ">=", "bitwise_and": "&", "bitwise_or": "|"}.get(name, "+")
    if form == "rscalar":
        return Step(f"{s!r} {symbol} {x.name}", lambda lib, a: OPERATORS[symbol](s, a), (x,))
    # A NumPy array operand: the tensor's operator lets NumPy compute, the array's defers
    # to the tensor, which refuses (NOTE [ NumPy arrays as operator operands ]).
    if form == "array_operator":
        return Step(f"{x.name} {symbol} np.array({s!r})", lambda lib, a: OPERATORS[symbol](a, np.array(s)), (x,))
    if form == "array_roperator":
        return Step(f"np.array({s!r}) {symbol} {x.name}", lambda lib, a: OPERATORS[symbol](np.array(s), a), (x,))
    return Step(f"{x.name} {symbol} {s!r}", lambda lib, a: OPERATORS[symbol](a, s), (x,))


OPERATORS = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
             "//": operator.floordiv, "%": operator.mod, "**": operator.pow, "<": operator.lt, ">=": operator.ge,
             "&": operator.and_, "|": operator.or_}


def cast_step(data, pool):
    x = _pick(data, pool)
    dtype = data.draw(st.sampled_from(DTYPES), label="dtype")
    return Step(f"{x.name}.to({dtype})", lambda lib, a: a.to(getattr(lib, dtype)), (x,))


def zero_d_step(data, pool):
    """A 0-d tensor of a drawn dtype meets a pool tensor: 0-d tensors promote by category."""
    x = _pick(data, pool)
    dtype = data.draw(st.sampled_from(DTYPES), label="dtype")
    s = scalar(data)
    name = data.draw(st.sampled_from(["add", "mul", "maximum", "lt"]), label="op")
    return Step(f"{name}({x.name}, tensor({s!r}, {dtype}))",
                lambda lib, a: getattr(lib, name)(a, lib.tensor(s).to(getattr(lib, dtype))), (x,))


# --- reductions and unary ops ------------------------------------------------------


REDUCTIONS = ["sum", "mean", "prod", "amax", "amin", "max", "min", "argmax", "argmin", "std", "var", "logsumexp",
              "cumsum", "cumprod", "all", "any", "norm", "nansum", "kthvalue", "sort", "topk", "median"]


def reduction_step(data, pool):
    x = _pick(data, pool)
    n = len(x.shape)
    name = data.draw(st.sampled_from(REDUCTIONS), label="reduction")
    keepdim = data.draw(st.booleans(), label="keepdim")
    form = data.draw(st.sampled_from(["all", "dim", "dims", "dtype"]), label="form")
    d = dim_of(data, n)
    if name in ("cumsum", "cumprod"):
        return Step(f"{x.name}.{name}({d})", lambda lib, a: getattr(a, name)(d), (x,))
    if name in ("kthvalue", "topk"):
        k = data.draw(st.integers(1, 3), label="k")
        return Step(f"{x.name}.{name}({k}, {d})", lambda lib, a: getattr(a, name)(k, d), (x,))
    if name == "sort":
        return Step(f"{x.name}.sort(dim={d}, stable=True)", lambda lib, a: a.sort(dim=d, stable=True), (x,))
    if form == "all" or name in ("median",) and form != "dim":
        return Step(f"{x.name}.{name}()", lambda lib, a: getattr(a, name)(), (x,))
    if form == "dtype" and name in ("sum", "mean", "prod", "nansum"):
        dtype = data.draw(st.sampled_from(DTYPES), label="dtype")
        return Step(f"{x.name}.{name}({d}, dtype={dtype})",
                    lambda lib, a: getattr(a, name)(d, dtype=getattr(lib, dtype)), (x,))
    if form == "dims" and name in ("sum", "mean", "amax", "amin", "std", "var", "logsumexp", "norm", "nansum"):
        dims = tuple(data.draw(st.lists(st.integers(-max(n, 1), max(n - 1, 0)), min_size=1, max_size=3,
                                        unique=True), label="dims"))
        if name == "norm":
            return Step(f"{x.name}.norm(dim={dims}, keepdim={keepdim})",
                        lambda lib, a: a.norm(dim=dims, keepdim=keepdim), (x,))
        return Step(f"{x.name}.{name}({dims}, keepdim={keepdim})",
                    lambda lib, a: getattr(a, name)(dims, keepdim=keepdim), (x,))
    if name == "norm":
        return Step(f"{x.name}.norm(dim={d})", lambda lib, a: a.norm(dim=d, keepdim=keepdim), (x,))
    return Step(f"{x.name}.{name}({d}, keepdim={keepdim})", lambda lib, a: getattr(a, name)(d, keepdim=keepdim), (x,))


UNARY = ["neg", "abs", "exp", "log", "sqrt", "sin", "tanh", "sigmoid", "relu", "floor", "round", "sign",
         "reciprocal", "square", "softmax", "log_softmax", "logical_not", "bitwise_not", "clone", "contiguous",
         "zeros_like", "ones_like", "empty_like", "rand_like", "float", "half", "isnan", "clamp", "sum_to_int"]


def unary_step(data, pool):
    x = _pick(data, pool)
    name = data.draw(st.sampled_from(UNARY), label="unary")
    if name in ("softmax", "log_softmax"):
        d = dim_of(data, len(x.shape))
        return Step(f"{x.name}.{name}({d})", lambda lib, a: getattr(a, name)(d), (x,))
    if name in ("zeros_like", "ones_like"):
        return Step(f"{name}({x.name})", lambda lib, a: getattr(lib, name)(a), (x,))
    if name in ("empty_like", "rand_like"):
        # The values are not comparable: only the layout is.
        return Step(f"{name}({x.name}) layout", lambda lib, a: _layout(getattr(lib, name)(a)), (x,))
    if name == "clamp":
        lo = scalar(data)
        return Step(f"{x.name}.clamp(min={lo!r})", lambda lib, a: a.clamp(min=lo), (x,))
    if name == "sum_to_int":
        return Step(f"{x.name}.sum(dtype=int64)", lambda lib, a: a.sum(dtype=lib.int64), (x,))
    return Step(f"{x.name}.{name}()", lambda lib, a: getattr(a, name)(), (x,))


def _layout(t):
    # As compare_values: strides are compared where there are at least two elements
    # (ember reports row-major strides for an empty tensor, whatever its history).
    return tuple(t.shape), tuple(t.stride()) if t.numel() > 1 else None, str(t.dtype).split(".")[-1]


# Families and their weights (how often a program draws each).
STEPS = [(view_step, 4), (getitem_step, 2), (setitem_step, 2), (inplace_step, 3), (binary_step, 4),
         (cast_step, 1), (zero_d_step, 1), (reduction_step, 3), (unary_step, 3)]
