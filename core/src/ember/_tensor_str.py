"""How a tensor prints: ``tensor([1.5000, 2.0000], requires_grad=True)``.

PyTorch counterpart: torch/_tensor_str.py (``_Formatter``, ``_tensor_str``,
``_str_intern``, ``_add_suffixes``) (v2.13).

One formatter per tensor picks a style from the nonzero finite values: integers as
floats (``1.``), fixed point with 4 decimals, or scientific notation when magnitudes
span more than 1000x or leave [1e-4, 1e8); every element is then right-aligned to one
width. Tensors with more than 1000 elements are summarised with ``...`` (3 items at
each edge of every dimension). Rows wrap at 80 characters, and so do the suffixes
(``dtype=``, ``grad_fn=``). Left out: ``set_printoptions``, complex and sparse tensors.
"""

import math

import numpy as np

from ember.dtypes import is_floating_array

PRECISION = 4
THRESHOLD = 1000
EDGEITEMS = 3
LINEWIDTH = 80


# NOTE [ Element width ]
# The width every element is padded to comes, for floating tensors, only from the
# nonzero finite values: "nan", "inf" and "-0." may stick out of the column, which is
# what PyTorch prints (tensor([nan, 1., 2.]), tensor([-0., 1.])). For integer and bool
# tensors the width is the longest printed value.
class _Formatter:
    """Chooses the style and the column width for one tensor's (summarised) values."""

    def __init__(self, values):
        self.floating = is_floating_array(values.dtype)
        self.int_mode = True
        self.sci_mode = False
        self.width = 1
        if not self.floating:
            self.width = max((len(str(v)) for v in values.tolist()), default=1)
            return
        values = values.astype(np.float64)
        nonzero_finite = values[np.isfinite(values) & (values != 0)]
        if nonzero_finite.size == 0:
            return
        magnitudes = np.abs(nonzero_finite)
        largest, smallest = magnitudes.max(), magnitudes.min()
        self.int_mode = bool(np.all(np.ceil(nonzero_finite) == nonzero_finite))
        spread_or_large = largest / smallest > 1000.0 or largest > 1.0e8
        self.sci_mode = spread_or_large if self.int_mode else (spread_or_large or smallest < 1.0e-4)
        self.width = max(len(self.format_plain(v)) for v in nonzero_finite.tolist())

    def format_plain(self, value):
        """``value`` (a Python scalar) in this tensor's style, without padding."""
        if not self.floating:
            return str(value)
        if self.sci_mode:
            return f"{value:.{PRECISION}e}"
        if self.int_mode:
            return f"{value:.0f}" + ("." if math.isfinite(value) else "")
        return f"{value:.{PRECISION}f}"

    def format(self, value):
        return self.format_plain(value).rjust(self.width)


def _summarized_values(a):
    """The values that will be printed: all of them, or only the edges of each dimension."""
    if a.ndim == 0:
        return a.reshape(-1)
    if a.shape[0] > 2 * EDGEITEMS:
        rows = list(a[:EDGEITEMS]) + list(a[-EDGEITEMS:])
    else:
        rows = list(a)
    if a.ndim == 1:
        return np.array(rows, dtype=a.dtype)
    return np.concatenate([_summarized_values(row) for row in rows])


def _vector_str(a, fmt, indent, summarize):
    """One 1-d row, wrapped so that no line is longer than LINEWIDTH."""
    values = a.tolist()
    if summarize and len(values) > 2 * EDGEITEMS:
        items = [fmt.format(v) for v in values[:EDGEITEMS]] + [" ..."] + \
                [fmt.format(v) for v in values[-EDGEITEMS:]]
    else:
        items = [fmt.format(v) for v in values]
    per_line = max(1, (LINEWIDTH - indent) // (fmt.width + 2))
    lines = [", ".join(items[i:i + per_line]) for i in range(0, len(items), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _array_str(a, fmt, indent, summarize):
    """Nested brackets: sub-arrays of a k-d array are separated by k-1 blank lines."""
    if a.ndim == 0:
        return fmt.format(a.item())
    if a.ndim == 1:
        return _vector_str(a, fmt, indent, summarize)
    if summarize and a.shape[0] > 2 * EDGEITEMS:
        rows = [_array_str(row, fmt, indent + 1, summarize) for row in a[:EDGEITEMS]] + ["..."] + \
               [_array_str(row, fmt, indent + 1, summarize) for row in a[-EDGEITEMS:]]
    else:
        rows = [_array_str(row, fmt, indent + 1, summarize) for row in a]
    separator = "," + "\n" * (a.ndim - 1) + " " * (indent + 1)
    return "[" + separator.join(rows) + "]"


def _add_suffixes(text, suffixes, indent):
    """Append ``, suffix`` items to ``tensor([...`` and close it, starting a new line
    when a suffix would pass LINEWIDTH."""
    parts = [text]
    last_line_length = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if last_line_length + len(suffix) + 2 > LINEWIDTH:
            parts.append(",\n" + " " * indent + suffix)
            last_line_length = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last_line_length += len(suffix) + 2
    parts.append(")")
    return "".join(parts)


def tensor_repr(t):
    """``repr(t)``: the values, then what the reader cannot infer (size of an empty
    tensor, a non-default dtype, the device, the autograd state)."""
    from ember import dtypes

    prefix = "tensor("
    indent = len(prefix)
    a = np.asarray(t._host())
    suffixes = []
    if t._device.type != "cpu":
        suffixes.append(f"device='{t._device}'")
    if a.size == 0:
        # An empty tensor shows its size (unless 1-d) and any dtype but the default float.
        body = "[]"
        if a.ndim != 1:
            suffixes.append(f"size={tuple(a.shape)}")
        if t.dtype is not dtypes.get_default_dtype():
            suffixes.append(f"dtype=ember.{t.dtype.name}")
    else:
        summarize = a.size > THRESHOLD
        fmt = _Formatter(_summarized_values(a) if summarize else a.reshape(-1))
        body = _array_str(a, fmt, indent, summarize)
        # Python data of each kind becomes one of these dtypes, so they go unsaid.
        if t.dtype not in (dtypes.get_default_dtype(), dtypes.int64, dtypes.bool_):
            suffixes.append(f"dtype=ember.{t.dtype.name}")
    if t.grad_fn is not None:
        suffixes.append(f"grad_fn=<{t.grad_fn.name()}>")
    elif t._requires_grad:
        suffixes.append("requires_grad=True")
    return _add_suffixes(prefix + body, suffixes, indent)
