"""ember.accelerator, ember.backends flags, Tensor.is_<device> probes, set_default_device,
the legacy ``Tensor(...)`` constructor: each answered as torch answers on a CPU-only host."""

import numpy as np
import pytest
import torch

import ember

CPU_ONLY = not torch.cuda.is_available()


@pytest.mark.skipif(not CPU_ONLY, reason="compares CPU-only answers")
def test_accelerator_answers_like_cpu_only_torch():
    assert ember.accelerator.is_available() == torch.accelerator.is_available() == ember.cuda.is_available()
    assert ember.accelerator.current_accelerator() is None and torch.accelerator.current_accelerator() is None
    assert ember.accelerator.device_count() == torch.accelerator.device_count() == 0
    for lib in (torch, ember):
        with pytest.raises(RuntimeError, match="Cannot access accelerator device when none is available."):
            lib.accelerator.current_device_index()


def test_the_official_examples_device_pick_runs():
    # The line torch's examples start with.
    device = ember.accelerator.current_accelerator() if ember.accelerator.is_available() else ember.device("cpu")
    assert ember.ones(2, device=device).device == device


def test_backend_flags_have_torchs_defaults_and_keep_what_is_set():
    pairs = [(ember.backends.cudnn, torch.backends.cudnn, ("enabled", "benchmark", "deterministic", "allow_tf32")),
             (ember.backends.cuda.matmul, torch.backends.cuda.matmul,
              ("allow_tf32", "allow_fp16_reduced_precision_reduction"))]
    for ours, theirs, names in pairs:
        for name in names:
            assert getattr(ours, name) == getattr(theirs, name), name
    assert ember.backends.mps.is_available() is False and ember.backends.mps.is_built() is False
    assert ember.backends.cudnn.is_available() is False and ember.backends.cudnn.version() is None
    before = ember.backends.cudnn.benchmark
    ember.backends.cudnn.benchmark = True
    assert ember.backends.cudnn.benchmark is True
    with ember.backends.cudnn.flags(enabled=False, deterministic=True):
        assert ember.backends.cudnn.deterministic is True and ember.backends.cudnn.enabled is False
    assert ember.backends.cudnn.deterministic is False and ember.backends.cudnn.enabled is True
    ember.backends.cudnn.benchmark = before
    assert ember.backends.cpu.get_cpu_capability() in ("DEFAULT", "AVX2", "AVX512")


def test_tensor_device_probes():
    e, t = ember.ones(2), torch.ones(2)
    for name in ("is_cpu", "is_cuda", "is_xpu", "is_mps", "is_meta", "is_ipu", "is_mtia", "is_xla",
                 "is_vulkan", "is_maia"):
        assert getattr(e, name) == getattr(t, name), name


def test_set_default_device():
    assert ember.get_default_device() == ember.device("cpu") and str(torch.get_default_device()) == "cpu"
    try:
        ember.set_default_device("cpu")
        assert ember.zeros(2).device == ember.device("cpu") and ember.randn(2).device == ember.device("cpu")
    finally:
        ember.set_default_device(None)
    assert ember.get_default_device() == ember.device("cpu")


@pytest.mark.parametrize("args", [([1, 2, 3],), ([[1.5, 2], [3, 4]],), (2, 3), (), (0,), (np.arange(3),)])
def test_legacy_tensor_constructor(args):
    e = ember.Tensor(*args)
    t = torch.Tensor(*args)
    assert tuple(e.shape) == tuple(t.shape) and e.dtype == ember.float32
    if args and not isinstance(args[0], int):
        np.testing.assert_array_equal(e.numpy(), t.numpy())


def test_legacy_constructor_of_a_tensor_and_a_size():
    x = ember.ones(2, dtype=ember.float64)
    assert ember.Tensor(x).dtype == ember.float64 and ember.Tensor(ember.Size([4])).shape == (4,)
    assert isinstance(ember.nn.Parameter(ember.ones(1)), ember.Tensor)
