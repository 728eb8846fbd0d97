"""ember.compile, ember.jit and the fused kernels on the CuPy backend: the compiled program
keeps every array on the GPU and gives the eager result. Skipped where no CUDA device
exists.

PyTorch counterpart: test/inductor/test_torchinductor.py (GPUTests) (v2.13).
"""

import numpy as np
import pytest

import ember

pytestmark = pytest.mark.skipif(not ember.cuda.is_available(), reason="needs a CUDA device")


def _host(t):
    return t.detach().cpu().numpy()


@pytest.mark.parametrize("name, make_inputs", [
    ("resnet8_cifar", lambda: (ember.randn(4, 3, 32, 32),)),
    ("yolo_nano", lambda: (ember.randn(2, 3, 64, 64),)),
])
@pytest.mark.parametrize("algorithm", ["auto", "eager", "im2col", "winograd_2x2", "winograd_4x4"])
def test_compiled_zoo_model_on_the_gpu(name, make_inputs, algorithm):
    import cupy

    ember.manual_seed(0)
    model = ember.zoo.create_model(name).eval().to("cuda")
    inputs = tuple(x.to("cuda") for x in make_inputs())
    compiled = ember.compile(model, conv_algorithm=algorithm)
    with ember.no_grad():
        expected = model(*inputs)
    got = compiled(*inputs)
    assert compiled.fallback_reason is None
    pairs = zip(got if isinstance(got, tuple) else (got,), expected if isinstance(expected, tuple) else (expected,))
    for g, e in pairs:
        assert g.device.type == "cuda" and isinstance(g._data, cupy.ndarray)
        np.testing.assert_allclose(_host(g), _host(e), rtol=1e-3, atol=1e-4)


def test_traced_graph_runs_on_the_gpu():
    model = ember.nn.Sequential(ember.nn.Linear(4, 4), ember.nn.GELU()).to("cuda").eval()
    x = ember.randn(3, 4, device="cuda")
    traced = ember.jit.trace(model, x)
    np.testing.assert_allclose(_host(traced(x)), _host(model(x)), rtol=1e-6)


def test_a_fused_chain_is_one_elementwise_kernel_on_the_gpu():
    import cupy

    from ember.compiler.passes.fusion import _EMIT, FusedElementwise

    steps = [("aten::mul", [("arg", 0), ("const", 2.0)]), ("aten::add", [("prev",), ("arg", 1)])]
    steps += [(q, [("prev",)]) for q in _EMIT if _EMIT[q][0] == 1 and q not in ("aten::sqrt", "aten::exp")]
    fused = FusedElementwise(steps)
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((3, 5)).astype(np.float32), rng.standard_normal((1, 5)).astype(np.float32)
    expected = fused.function(np)(a, b, out=np.empty((3, 5), np.float32))
    out = cupy.empty((3, 5), cupy.float32)
    got = fused.function(cupy)(cupy.asarray(a), cupy.asarray(b), out=out)
    assert fused._kernel is not None  # the chain ran as one ElementwiseKernel
    np.testing.assert_allclose(cupy.asnumpy(got), expected, rtol=1e-5, atol=1e-6)
