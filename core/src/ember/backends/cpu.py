"""``ember.backends.cpu``: what the CPU supports, and whether CPU convolutions may
measure their algorithm per shape (``benchmark``, ember's own flag).

PyTorch counterpart: torch/backends/cpu/__init__.py (v2.13), and for ``benchmark``
torch/backends/cudnn/__init__.py's flag of that name (torch has none for the CPU: NOTE
[ Measuring CPU convolutions, opt-in ] says why ember has one). ember's CPU kernels are
NumPy's, which choose their SIMD level themselves; ``get_cpu_capability()`` reports the
best one NumPy found.
"""


def get_cpu_capability():
    """``"AVX512"``, ``"AVX2"`` or ``"DEFAULT"``, from NumPy's detected SIMD extensions."""
    import numpy as np

    found = np.show_config(mode="dicts").get("SIMD Extensions", {}).get("found", [])
    if any(name.startswith("AVX512") or name == "X86_V4" for name in found):
        return "AVX512"
    if "AVX2" in found or "X86_V3" in found:
        return "AVX2"
    return "DEFAULT"


# NOTE [ Measuring CPU convolutions, opt-in ]
# torch has no such flag: its CPU convolution is one fixed kernel per case (oneDNN's
# direct kernel, or im2col + GEMM), so there is nothing to measure, and
# ``torch.backends.cudnn.benchmark`` (off by default) is the switch that lets cuDNN
# time its algorithms per shape on a GPU. ember's CPU convolutions have a choice that
# cuDNN's resembles: Winograd F(4x4, 3x3) is faster than im2col on some 3x3 layers and
# slower on others, depending on the machine. So ``benchmark`` is cudnn.benchmark's
# counterpart for ember's CPU: off (the default), every eager convolution takes the
# kernel of a fixed rule by shape, which gives the same bits in every process and
# rounds as torch's im2col; on, the first call of each shape times Winograd against it
# and keeps the faster (NOTE [ Choosing a convolution algorithm by measurement ] in
# ember/native/convolution/algorithm.py). The choice then depends on the machine's
# load, and Winograd rounds about 30x worse than torch in float32, so results may
# differ between two runs of the same program; ``ember.use_deterministic_algorithms
# (True)`` turns the measuring off again.
benchmark = False
