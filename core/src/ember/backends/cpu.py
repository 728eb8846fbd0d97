"""``ember.backends.cpu``: what the CPU supports.

PyTorch counterpart: torch/backends/cpu/__init__.py (v2.13). ember's CPU kernels are
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
