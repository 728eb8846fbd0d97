"""How a tensor prints: ``tensor([1.5000, 2.0000], requires_grad=True)``.

PyTorch counterpart: torch/_tensor_str.py (``_Formatter``, ``_tensor_str``,
``_str_intern``) (v2.13).

One formatter per tensor picks a style from all finite values: integers-as-floats
(``1.``), fixed point with 4 decimals, or scientific notation when magnitudes span
more than 1000x or leave [1e-4, 1e8); every element is then padded to one width.
Large tensors are summarised with ``...`` (more than 1000 elements, 3 at each edge).
"""

import math

import numpy as np

PRECISION = 4
THRESHOLD = 1000
EDGEITEMS = 3
LINEWIDTH = 80


class _Formatter:
    def __init__(self, values, is_float):
        self.is_float = is_float
        self.int_mode = True
        self.sci_mode = False
        self.width = 1
        finite = values[np.isfinite(values)] if is_float else values
        if not is_float:
            self.width = max((len(str(v)) for v in values.tolist()), default=1)
            return
        if finite.size == 0:
            self.width = max((len(_special(v)) for v in values.tolist()), default=1)
            return
        abs_finite = np.abs(finite.astype(np.float64))
        nonzero = abs_finite[abs_finite != 0]
        self.int_mode = bool(np.all(np.ceil(finite) == finite))
        if self.int_mode:
            if nonzero.size and (nonzero.max() / nonzero.min() > 1000.0 or nonzero.max() > 1.0e8):
                self.sci_mode = True
        elif nonzero.size and (nonzero.max() / nonzero.min() > 1000.0 or nonzero.max() > 1.0e8 or nonzero.min() < 1.0e-4):
            self.sci_mode = True
        self.width = max(len(self.format_plain(v)) for v in values.tolist())

    def format_plain(self, value):
        if not self.is_float:
            return str(value)
        if not math.isfinite(value):
            return _special(value)
        if self.sci_mode:
            return f"{value:.{PRECISION}e}"
        if self.int_mode:
            return f"{value:.0f}."
        return f"{value:.{PRECISION}f}"

    def format(self, value):
        return self.format_plain(value).rjust(self.width)


def _special(value):
    if isinstance(value, float) and math.isnan(value):
        return "nan"
    if isinstance(value, float) and math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return str(value)


def _summarized_values(a):
    if a.ndim == 0 or a.size <= THRESHOLD:
        return a.reshape(-1)
    parts = []
    if a.shape[0] > 2 * EDGEITEMS:
        for part in (a[:EDGEITEMS], a[-EDGEITEMS:]):
            parts.extend(_summarized_values(x) for x in part)
    else:
        parts.extend(_summarized_values(x) for x in a)
    return np.concatenate(parts) if parts else a.reshape(-1)


def _bool_str(v):
    return "True" if v else "False"


def _format_array(a, fmt, indent, summarize):
    if a.ndim == 0:
        return fmt.format(a.item()) if a.dtype.kind != "b" else _bool_str(a.item())
    if a.ndim == 1:
        items = a.tolist()
        if summarize and len(items) > 2 * EDGEITEMS:
            strs = [_elem(x, fmt) for x in items[:EDGEITEMS]] + [" ..."] + [_elem(x, fmt) for x in items[-EDGEITEMS:]]
        else:
            strs = [_elem(x, fmt) for x in items]
        per_line = max(math.floor((LINEWIDTH - indent) / (len(strs[0]) + 2 if strs else 1)), 1) if strs else 1
        lines = [", ".join(strs[i:i + per_line]) for i in range(0, len(strs), per_line)]
        return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"
    if summarize and a.shape[0] > 2 * EDGEITEMS:
        rows = [_format_array(x, fmt, indent + 1, summarize) for x in a[:EDGEITEMS]] + ["..."] + \
               [_format_array(x, fmt, indent + 1, summarize) for x in a[-EDGEITEMS:]]
    else:
        rows = [_format_array(x, fmt, indent + 1, summarize) for x in a]
    separator = "," + "\n" * (a.ndim - 1) + " " * (indent + 1)
    return "[" + separator.join(rows) + "]"


def _elem(x, fmt):
    if isinstance(x, bool):
        return _bool_str(x).rjust(fmt.width if not fmt.is_float else 5)
    return fmt.format(x)


def tensor_repr(t):
    from ember import dtypes

    a = np.asarray(t._host())
    summarize = a.size > THRESHOLD
    suffixes = []
    if t._device.type != "cpu":
        suffixes.append(f"device='{t._device}'")
    if a.size == 0 and a.ndim != 1:
        body = "[]"
        suffixes.insert(0, f"size={tuple(a.shape)}")
    elif a.size == 0:
        body = "[]"
    else:
        values = _summarized_values(a)
        if a.dtype.kind == "b":
            fmt = _Formatter(values.astype(np.int64), False)
            fmt.width = 5 if values.any() and not values.all() else (4 if values.all() else 5)
        else:
            fmt = _Formatter(values.astype(np.float64) if a.dtype.kind == "f" else values, a.dtype.kind == "f")
        body = _format_array(a.astype(np.float64) if a.dtype.kind == "f" else a, fmt, len("tensor("), summarize)
    implied = (dtypes.get_default_dtype(), dtypes.int64, dtypes.bool_)
    if t.dtype not in implied or (a.size == 0 and t.dtype is not dtypes.get_default_dtype()):
        suffixes.append(f"dtype=ember.{t.dtype.name}")
    if t.grad_fn is not None:
        suffixes.append(f"grad_fn=<{t.grad_fn.name()}>")
    elif t._requires_grad:
        suffixes.append("requires_grad=True")
    return "tensor(" + body + "".join(", " + s for s in suffixes) + ")"
