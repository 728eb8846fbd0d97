"""``ember.backends.cuda``: ``matmul.allow_tf32`` and the other CUDA matmul and
attention switches, ``is_built()``.

PyTorch counterpart: torch/backends/cuda/__init__.py (v2.13). The flags keep PyTorch's
defaults and what a script sets; ember's CUDA backend (CuPy) computes float32 products
in float32 whatever they say. ``is_built()`` is whether ember-cupy is installed.
"""


class _MatmulFlags:
    """``ember.backends.cuda.matmul``: TF32 and reduced-precision reduction switches."""

    def __init__(self):
        self.allow_tf32 = False
        self.allow_fp16_reduced_precision_reduction = True
        self.allow_bf16_reduced_precision_reduction = True
        self.allow_fp16_accumulation = False


matmul = _MatmulFlags()


def is_built():
    """Whether a CUDA backend plugin (ember-cupy) is installed."""
    from ember.plugins import registry

    return registry.find_backend("cuda") is not None


_sdp = {"flash": True, "mem_efficient": True, "math": True, "cudnn": True}


def flash_sdp_enabled():
    return _sdp["flash"]


def enable_flash_sdp(enabled):
    _sdp["flash"] = bool(enabled)


def mem_efficient_sdp_enabled():
    return _sdp["mem_efficient"]


def enable_mem_efficient_sdp(enabled):
    _sdp["mem_efficient"] = bool(enabled)


def math_sdp_enabled():
    return _sdp["math"]


def enable_math_sdp(enabled):
    _sdp["math"] = bool(enabled)
