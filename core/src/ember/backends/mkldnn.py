"""``ember.backends.mkldnn``: whether oneDNN (MKL-DNN) is available, and the switch
that lets CPU convolutions use their fast algorithms.

PyTorch counterpart: torch/backends/mkldnn/__init__.py (v2.13). ember has no oneDNN
kernels, so ``is_available()`` is False. ``enabled`` keeps torch's meaning for
convolutions: in torch, True (the default) runs CPU convolutions through oneDNN and
False sends them to im2col and GEMM (``slow_conv2d``); in ember, True lets NCHW
convolutions take the faster GEMM kernels of the fixed rule by shape (1x1 per image,
small maps gathered in NHWC, a few images at a time, the input's gradient by phases or
as a full correlation: NOTE [ Choosing a convolution algorithm ] in
ember/native/convolution/algorithm.py), and False runs the reference im2col + GEMM of
ember/native/convolution/convolution.py for every NCHW product (the plain path;
channels_last ones keep their NHWC window rows, as their layout asks). Either way the
choice is fixed by shape, so every process gets the same bits; Winograd runs only under
``ember.backends.cpu.benchmark`` (and not with this flag False). ``deterministic`` is
kept with torch's default and changes nothing (``ember.use_deterministic_algorithms``
is the switch that stops measuring).
"""

import contextlib

enabled = True
deterministic = False


def is_available():
    return False


@contextlib.contextmanager
def flags(enabled=False, deterministic=False):
    """Set ``enabled`` (and ``deterministic``, kept for torch's signature) inside a
    ``with`` block, restore them after (torch's ``mkldnn.flags``)."""
    module = globals()
    previous = {name: module[name] for name in ("enabled", "deterministic")}
    module.update(enabled=enabled, deterministic=deterministic)
    try:
        yield
    finally:
        module.update(previous)
