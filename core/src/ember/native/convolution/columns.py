"""The forward's im2col columns, kept on the autograd graph for the weight's gradient:
the memo that lets ``aten::convolution_backward`` skip its second im2col.

PyTorch counterpart: aten/src/ATen/native/ConvolutionMM2d.cpp (v2.13), whose
``slow_conv2d`` backward computes the columns again; PyTorch's older THNN kernel kept
them (``finput``) from the forward, as ember does here within a memory budget.

# NOTE [ The forward's columns, kept for the weight's gradient ]
# The weight's gradient of an im2col convolution is the output gradient against the
# very columns the forward built from x (NOTE [ Convolution as a bilinear map ]), and
# building them is a copy of 9x the input: about a tenth of a training step
# (bench/cnn_step.py's NCHW step took 0.85 of the time with them kept). So when
# autograd will want the weight's gradient, ``convolution`` asks its kernel for the
# columns (``capture``), hangs them on the node it recorded (``keep``), and the
# backward formula hands them back to the
# backward kernel (``handing_over``), which uses them when their shape is the one it
# needs and builds them otherwise. They live as long as the node (a weak dictionary):
# freed by the backward that uses them, or with the graph if none runs. Above
# BUDGET bytes kept at once, further columns are not kept (those layers rebuild
# theirs): a large model costs at most BUDGET more memory than PyTorch's kernel, and
# holding more measured slower on a deep network (BUDGET below says how much).
# The memo never changes a result: the kept columns are exactly the ones the backward
# would build, and autograd's version check already forbids changing x in between.
"""

import threading
import weakref

# At most this many bytes of columns are kept at once, over all live graphs. Measured
# on ResNet-18's NCHW training step (CPU time, interleaved, load 4-7): keeping up to
# 512 MiB made it 8-21% slower (its four 75 MB layer-1 columns held through the rest
# of the forward), although each layer alone gained 9-18%; 16 MiB was even (0.998).
# bench/cnn_step.py's columns (13 MB) fit; conv_layer's (38 MB) do not.
BUDGET = 16 << 20
# One convolution's columns are kept past BUDGET, up to ALONE, when nothing else is
# kept: bench/conv_layer.py's 38 MB then took 0.84-0.89 of its step, and a deep
# network keeps its first, small columns first (the stem's), so it stays within BUDGET.
ALONE = 64 << 20

_KEPT = weakref.WeakKeyDictionary()  # recorded node -> its forward's columns
_local = threading.local()


def capture():
    """Ask the next convolution kernel (this thread) to offer its columns."""
    _local.offered = None
    _local.wanted = True


def offer(columns, layout):
    """Called by a forward kernel with the columns it built; ``layout`` names them:
    ``"columns"`` (NCHW's ``(groups, K, N*L)``) or ``"rows"`` (NHWC's ``(groups, N*L,
    K)``), which a square case could not tell apart by shape."""
    if getattr(_local, "wanted", False):
        _local.offered = (layout, columns)


def wanted(size):
    """Whether a kernel that builds its columns a few images at a time in a buffer it
    reuses should write them apart for the weight's gradient: a capture asks for them
    and ``size`` bytes fit within BUDGET. Not ALONE: on bench/conv_layer.py's 38 MB the
    step took 1.40 of torch's with them kept, 1.16 building them again (interleaved, CPU
    time, load 3), where a 9 MB layer gained 5% (NOTE [ NCHW products one image at a
    time ] in ember/native/convolution/images.py)."""
    return getattr(_local, "wanted", False) and kept_bytes() + size <= BUDGET


def withdraw():
    """Take back what a kernel offered: it is not worth keeping (see the caller)."""
    _local.offered = None


def keep(node):
    """Hang the offered columns on ``node`` (None: autograd recorded nothing), within
    :data:`BUDGET`; ends the capture."""
    columns, _local.offered, _local.wanted = getattr(_local, "offered", None), None, False
    if node is None or columns is None:
        return
    size = columns[1].nbytes
    # nothing kept: ALONE is the limit (>= BUDGET), and the weak dictionary is not walked
    if (size <= ALONE) if not _KEPT else (kept_bytes() + size <= BUDGET):
        _KEPT[node] = columns


class handing_over:
    """``with handing_over(node):`` the backward kernel run inside may :func:`take`
    the node's kept columns, which leave the memo (a second backward builds its own)."""

    def __init__(self, node):
        self.columns = _KEPT.pop(node, None)

    def __enter__(self):
        _local.handed = self.columns

    def __exit__(self, *exc):
        _local.handed = None


def take(layout, shape, dtype):
    """The handed-over columns if they are in this layout, shape and dtype (and then
    only once), else None."""
    handed = getattr(_local, "handed", None)
    if handed is None:
        return None
    kept_layout, columns = handed
    if kept_layout != layout or columns.shape != tuple(shape) or columns.dtype != dtype:
        return None
    _local.handed = None
    return columns


def kept_bytes():
    """Bytes of columns kept now (for tests and benches)."""
    return sum(columns.nbytes for _, columns in _KEPT.values())
