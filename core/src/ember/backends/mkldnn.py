"""``ember.backends.mkldnn``: whether oneDNN (MKL-DNN) is available, and the switch
that lets CPU convolutions use their fast algorithms.

PyTorch counterpart: torch/backends/mkldnn/__init__.py (v2.13). ember has no oneDNN
kernels, so ``is_available()`` is False. ``enabled`` keeps torch's meaning for
convolutions: in torch, True (the default) runs CPU convolutions through oneDNN and
False sends them to im2col and GEMM (``slow_conv2d``); in ember, True lets eager CPU
convolutions use Winograd where it applies and measures faster, chosen per shape
(NOTE [ Choosing a convolution algorithm by measurement ] in
ember/native/convolution/algorithm.py) and NCHW forwards on small maps to gather in
NHWC (NOTE [ Small NCHW maps gather in NHWC ] in ember/native/convolution/convolution.py), and
False keeps NCHW im2col everywhere (bit-for-bit the result of earlier ember versions).
ember differs from torch here: torch's CPU convolution is oneDNN's direct kernel, not
Winograd, so ember's float32 results with F(4x4) differ from torch's by up to about
1e-5 of the output's largest magnitude (NOTE [ Winograd F(4x4, 3x3) ] in
ember/native/convolution/winograd.py). ``deterministic`` is
kept with torch's default and changes nothing: each of ember's algorithms gives the same
bits on every run; which one a shape gets is measured, and cached for the process.
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
