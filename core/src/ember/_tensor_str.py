"""How a tensor prints: ``tensor([1.5000, 2.0000], requires_grad=True)``.

PyTorch counterpart: torch/_tensor_str.py (``_Formatter``, ``_tensor_str``,
``_str_intern``, ``_add_suffixes``) (v2.13).

One formatter per tensor picks a style from the nonzero finite values: integers as
floats (``1.``), fixed point with 4 decimals, or scientific notation when magnitudes
span more than 1000x or leave [1e-4, 1e8); every element is then right-aligned to one
width. Tensors with more than 1000 elements are summarised with ``...`` (3 items at
each edge of every dimension). Rows wrap at 80 characters, and so do the suffixes
(``dtype=``, ``grad_fn=``). ``set_printoptions`` changes the four numbers and can force
scientific notation on or off, as torch's does. A complex tensor's real and imaginary
parts get a formatter each (``_ComplexFormatter``). A sparse COO tensor prints its
indices and values, then its size, ``nnz`` and layout (``sparse_repr``).
"""

import contextlib
import dataclasses
import math

import numpy as np

from ember.dtypes import is_complex_array, is_floating_array


@dataclasses.dataclass
class _PrinterOptions:
    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: bool | None = None  # None: chosen per tensor from its values


PRINT_OPTS = _PrinterOptions()

_PROFILES = {"default": (4, 1000, 3, 80), "short": (2, 1000, 2, 80), "full": (4, math.inf, 3, 80)}


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None,
                     sci_mode=None):
    """How tensors print from now on: ``precision`` digits after the point, summarised
    past ``threshold`` elements with ``edgeitems`` at each edge, lines of ``linewidth``;
    ``profile`` ("default", "short", "full") sets all four first; ``sci_mode`` True/False
    forces scientific notation on/off and None (what every call not naming it sets)
    chooses per tensor, as in torch."""
    if profile is not None:
        if profile not in _PROFILES:
            raise ValueError(f"profile must be one of {sorted(_PROFILES)}, got {profile!r}")
        (PRINT_OPTS.precision, PRINT_OPTS.threshold, PRINT_OPTS.edgeitems,
         PRINT_OPTS.linewidth) = _PROFILES[profile]
    for name, value in (("precision", precision), ("threshold", threshold), ("edgeitems", edgeitems),
                        ("linewidth", linewidth)):
        if value is not None:
            setattr(PRINT_OPTS, name, value)
    PRINT_OPTS.sci_mode = sci_mode


def get_printoptions():
    """The current print options as a dict (the keyword arguments of ``set_printoptions``
    but ``profile``)."""
    return dataclasses.asdict(PRINT_OPTS)


@contextlib.contextmanager
def printoptions(**kwargs):
    """``set_printoptions(**kwargs)`` for the duration of a ``with`` block."""
    saved = get_printoptions()
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        set_printoptions(**saved)


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
        self.sci_mode = PRINT_OPTS.sci_mode
        if self.sci_mode is None:
            self.sci_mode = spread_or_large or smallest < 1.0e-4
        self.width = max(len(self.format_plain(v)) for v in nonzero_finite.tolist())

    def format_plain(self, value):
        """``value`` (a Python scalar) in this tensor's style, without padding."""
        if not self.floating:
            return str(value)
        if self.sci_mode:
            return f"{value:.{PRINT_OPTS.precision}e}"
        if self.int_mode:
            return f"{value:.0f}" + ("." if math.isfinite(value) else "")
        return f"{value:.{PRINT_OPTS.precision}f}"

    def format(self, value):
        return self.format_plain(value).rjust(self.width)


class _ComplexFormatter:
    """Prints ``re+imj``: the real parts in their own style and width, the imaginary
    parts in theirs, joined by their sign (``1.5000+2.0000e+00j``), as PyTorch does."""

    def __init__(self, values):
        self.real = _Formatter(values.real)
        self.imag = _Formatter(values.imag)
        self.width = self.real.width + self.imag.width + 1  # the "j"

    def format(self, value):
        imag = (self.imag.format(value.imag) + "j").lstrip()
        sign = "" if imag[0] in "+-" else "+"
        return self.real.format(value.real) + sign + imag


def _formatter(values):
    """The formatter for a tensor's (summarised, flattened) values."""
    return _ComplexFormatter(values) if is_complex_array(values.dtype) else _Formatter(values)


def _summarized_values(a):
    """The values that will be printed: all of them, or only the edges of each dimension."""
    if a.ndim == 0:
        return a.reshape(-1)
    if a.shape[0] > 2 * PRINT_OPTS.edgeitems:
        rows = list(a[:PRINT_OPTS.edgeitems]) + list(a[-PRINT_OPTS.edgeitems:])
    else:
        rows = list(a)
    if a.ndim == 1:
        return np.array(rows, dtype=a.dtype)
    return np.concatenate([_summarized_values(row) for row in rows])


def _vector_str(a, fmt, indent, summarize):
    """One 1-d row, wrapped so that no line is longer than the line width."""
    values = a.tolist()
    if summarize and len(values) > 2 * PRINT_OPTS.edgeitems:
        items = [fmt.format(v) for v in values[:PRINT_OPTS.edgeitems]] + [" ..."] + \
                [fmt.format(v) for v in values[-PRINT_OPTS.edgeitems:]]
    else:
        items = [fmt.format(v) for v in values]
    per_line = max(1, (PRINT_OPTS.linewidth - indent) // (fmt.width + 2))
    lines = [", ".join(items[i:i + per_line]) for i in range(0, len(items), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _array_str(a, fmt, indent, summarize):
    """Nested brackets: sub-arrays of a k-d array are separated by k-1 blank lines."""
    if a.ndim == 0:
        return fmt.format(a.item())
    if a.ndim == 1:
        return _vector_str(a, fmt, indent, summarize)
    if summarize and a.shape[0] > 2 * PRINT_OPTS.edgeitems:
        rows = [_array_str(row, fmt, indent + 1, summarize) for row in a[:PRINT_OPTS.edgeitems]] + ["..."] + \
               [_array_str(row, fmt, indent + 1, summarize) for row in a[-PRINT_OPTS.edgeitems:]]
    else:
        rows = [_array_str(row, fmt, indent + 1, summarize) for row in a]
    separator = "," + "\n" * (a.ndim - 1) + " " * (indent + 1)
    return "[" + separator.join(rows) + "]"


def _add_suffixes(text, suffixes, indent):
    """Append ``, suffix`` items to ``tensor([...`` and close it, starting a new line
    when a suffix would pass the line width."""
    parts = [text]
    last_line_length = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if last_line_length + len(suffix) + 2 > PRINT_OPTS.linewidth:
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
        summarize = a.size > PRINT_OPTS.threshold
        fmt = _formatter(_summarized_values(a) if summarize else a.reshape(-1))
        body = _array_str(a, fmt, indent, summarize)
        # Python data of each kind becomes one of these dtypes, so they go unsaid.
        if t.dtype not in (dtypes.get_default_dtype(), dtypes.default_complex_dtype(), dtypes.int64, dtypes.bool_):
            suffixes.append(f"dtype=ember.{t.dtype.name}")
    if t.grad_fn is not None:
        suffixes.append(f"grad_fn=<{t.grad_fn.name()}>")
    elif t._requires_grad:
        suffixes.append("requires_grad=True")
    tangent = _tangent(t)
    if tangent is not None:  # a dual tensor shows its tangent at the current level, as torch's does
        suffixes.append(f"tangent={tangent}")
    return _add_suffixes(prefix + body, suffixes, indent)


def _part_str(part, indent):
    """The bracketed values of one part of a sparse tensor (its indices or values),
    continuation lines indented to ``indent``; an empty part shows its size."""
    a = np.asarray(part.detach()._host())
    if a.size == 0:
        return f"[], size={tuple(a.shape)}"
    summarize = a.size > PRINT_OPTS.threshold
    fmt = _formatter(_summarized_values(a) if summarize else a.reshape(-1))
    return _array_str(a, fmt, indent, summarize)


def sparse_repr(t):
    """``repr`` of a sparse COO tensor, as torch's ``_str_intern`` lays it out:
    ``tensor(indices=tensor([...]),`` / ``values=tensor([...]),`` / ``size=..., nnz=...,
    layout=ember.sparse_coo)``, the last line always a line of its own."""
    from ember import dtypes

    indent = len("tensor(")
    parts = []
    for name, part in (("indices", t._indices()), ("values", t._values())):
        prefix = f"{name}=tensor("
        parts.append(prefix + _part_str(part, indent + len(prefix)) + ")")
    suffixes = [f"nnz={t._nnz()}"]
    if t._device.type != "cpu":
        suffixes.append(f"device='{t._device}'")
    if t.dtype is not dtypes.get_default_dtype():
        suffixes.append(f"dtype=ember.{t.dtype.name}")
    suffixes.append(f"layout={t.layout}")
    if t.grad_fn is not None:
        suffixes.append(f"grad_fn=<{t.grad_fn.name()}>")
    elif t.requires_grad:
        suffixes.append("requires_grad=True")
    text = "tensor(" + (",\n" + " " * indent).join(parts) + ",\n" + " " * indent + f"size={tuple(t.shape)}"
    return _add_suffixes(text, suffixes, indent)


def _tangent(t):
    from ember.autograd.forward_grad import state, tangent_of

    return tangent_of(t, state.levels[-1]) if state.levels and t._fw_grads is not None else None
