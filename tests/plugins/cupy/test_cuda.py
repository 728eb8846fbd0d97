"""ember on a CUDA device: parity with the cpu backend (values, dtypes, gradients),
transfers, device errors, ``ember.cuda``'s services, pinned memory, the fused kernels,
and checkpoints of cuda tensors. Every test needs a GPU and is skipped only where no
CUDA device exists; the no-CUDA behaviour is test_unavailable.py's.
"""

import io

import numpy as np
import pytest

import ember
from ember.testing import make_tensor

pytestmark = pytest.mark.skipif(not ember.cuda.is_available(), reason="needs a CUDA device (ember.cuda.is_available())")

DEVICES = [f"cuda:{i}" for i in range(ember.cuda.device_count())]

# (name, function of ember tensors, input shapes): a representative op of each family.
OPS = [
    ("add", lambda a, b: a + b, [(2, 3), (3,)]),
    ("mul_scalar", lambda a: 2.5 * a, [(2, 0, 3)]),
    ("div", lambda a, b: a / b, [(3, 1), (1, 4)]),
    ("exp_tanh", lambda a: a.exp().tanh(), [()]),
    ("relu", lambda a: a.relu(), [(4, 5)]),
    ("sum_mean", lambda a: a.sum(1) + a.mean(0, keepdim=True).sum(), [(3, 4)]),
    ("softmax", lambda a: ember.softmax(a, dim=-1), [(2, 5)]),
    ("matmul", lambda a, b: a @ b, [(2, 3, 4), (4, 5)]),
    ("transpose_reshape", lambda a: a.transpose(0, 1).reshape(-1) * 1, [(3, 4)]),
    ("index", lambda a: a[ember.tensor([0, 2, 2], device=a.device)], [(3, 2)]),
    ("index_add", lambda a, b: ember.zeros(4, 2, device=a.device, dtype=a.dtype).index_add(
        0, ember.tensor([0, 3, 3], device=a.device), a + b), [(3, 2), (3, 2)]),
    ("where_max", lambda a, b: ember.where(a > 0, a, b).amax(0), [(3, 4), (3, 4)]),
    ("cat_sort", lambda a, b: ember.cat([a, b]).sort(0)[0], [(2, 3), (1, 3)]),
]


def _pair(shapes, dtype, device):
    hosts = [make_tensor(shape, dtype, seed=i) for i, shape in enumerate(shapes)]
    cpu = [ember.tensor(h, requires_grad=dtype.startswith("float")) for h in hosts]
    gpu = [ember.tensor(h, device=device, requires_grad=dtype.startswith("float")) for h in hosts]
    return cpu, gpu


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(("name", "fn", "shapes"), OPS, ids=[op[0] for op in OPS])
def test_ops_and_gradients_match_the_cpu_backend(device, dtype, name, fn, shapes):
    cpu_inputs, gpu_inputs = _pair(shapes, dtype, device)
    expected, got = fn(*cpu_inputs), fn(*gpu_inputs)
    assert got.device == ember.device(device) and got.dtype == expected.dtype and got.shape == expected.shape
    tol = dict(rtol=1e-5, atol=1e-5) if dtype == "float32" else dict(rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(got.detach().cpu().numpy(), expected.detach().numpy(), **tol)
    upstream = make_tensor(tuple(expected.shape), dtype, seed=99)
    expected.backward(ember.tensor(upstream))
    got.backward(ember.tensor(upstream, device=device))
    for c, g in zip(cpu_inputs, gpu_inputs):
        assert g.grad.device == ember.device(device)
        np.testing.assert_allclose(g.grad.cpu().numpy(), c.grad.numpy(), **tol)


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "int32", "int64", "bool"])
def test_integer_scatter_add_matches_the_cpu_backend(dtype):
    def index_add(device):
        a = ember.tensor(make_tensor((4, 3), dtype), device=device)
        source = ember.tensor(make_tensor((6, 3), dtype, seed=1), device=device)
        return a.index_add(0, ember.tensor([0, 2, 2, 3, 0, 2], device=device), source)

    np.testing.assert_array_equal(index_add(DEVICES[0]).cpu().numpy(), index_add("cpu").numpy())


def test_gradcheck_through_the_device_in_float64():
    x = ember.tensor(make_tensor((3, 2), "float64"), requires_grad=True)
    assert ember.autograd.gradcheck(lambda a: (a.cuda() * a.cuda()).sin().sum(0).cpu(), (x,))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bool", "float16"])
@pytest.mark.parametrize("shape", [(), (0,), (2, 0, 3), (3, 2)])
def test_transfers_keep_values_dtype_and_shape(dtype, shape):
    host = make_tensor(shape, dtype)
    x = ember.tensor(host)
    on_gpu = x.cuda()
    assert on_gpu.device == ember.device("cuda", ember.cuda.current_device()) and on_gpu.is_cuda
    assert on_gpu.to("cuda") is on_gpu and on_gpu.to(on_gpu.device) is on_gpu
    back = on_gpu.cpu()
    assert back.dtype == x.dtype and back.shape == x.shape
    np.testing.assert_array_equal(back.numpy(), host)
    np.testing.assert_array_equal(x.T.contiguous().cuda().cpu().numpy(), host.T)  # non-contiguous source


def test_device_cuda_means_the_current_device_like_torch():
    assert ember.zeros(2, device="cuda").device == ember.device("cuda", ember.cuda.current_device())
    a, b = ember.ones(2, device="cuda"), ember.ones(2).to("cuda:0")
    assert (a + b).device == ember.device("cuda:0")


def test_mixing_devices_is_an_error_like_torch():
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device.*cpu.*cuda:0|cuda:0.*cpu"):
        ember.ones(2) + ember.ones(2, device="cuda:0")
    with pytest.raises(TypeError, match="can't convert cuda"):
        ember.ones(2, device="cuda").numpy()


def test_an_index_past_the_last_device_is_a_cuda_error():
    with pytest.raises(RuntimeError, match="invalid device ordinal"):
        ember.zeros(2, device=f"cuda:{ember.cuda.device_count()}")


def test_ember_cuda_services():
    assert ember.cuda.device_count() >= 1 and 0 <= ember.cuda.current_device() < ember.cuda.device_count()
    assert isinstance(ember.cuda.get_device_name(), str) and ember.cuda.get_device_name(0)
    ember.cuda.set_device(0)
    assert ember.cuda.current_device() == 0
    ember.cuda.synchronize()
    ember.cuda.synchronize("cuda:0")
    ember.cuda.reset_peak_memory_stats()
    before = ember.cuda.memory_allocated()
    big = ember.zeros(1 << 20, device="cuda")  # 4 MiB
    assert ember.cuda.memory_allocated() >= before + 4 * (1 << 20)
    del big
    assert ember.cuda.max_memory_allocated() >= before + 4 * (1 << 20) > ember.cuda.memory_allocated()
    ember.cuda.empty_cache()
    assert ember.cuda.memory_reserved() >= ember.cuda.memory_allocated()
    ember.cuda.manual_seed(0)
    ember.cuda.manual_seed_all(0)
    properties = ember.cuda.get_device_properties(0)
    assert properties.name == ember.cuda.get_device_name(0) and properties.total_memory > 2 ** 30
    assert ember.cuda.get_device_capability() == (properties.major, properties.minor) and properties.major >= 3
    assert ember.version.cuda.count(".") == 1


def test_random_factories_give_the_same_numbers_on_both_devices():
    ember.manual_seed(7)
    cpu = ember.randn(3, 4)
    ember.manual_seed(7)
    gpu = ember.randn(3, 4, device="cuda")
    np.testing.assert_array_equal(gpu.cpu().numpy(), cpu.numpy())


def test_pinned_memory():
    x = ember.tensor(make_tensor((3, 4)), requires_grad=True)
    pinned = x.pin_memory()
    assert pinned.is_pinned() and not x.is_pinned() and pinned.device == ember.device("cpu")
    assert pinned.pin_memory() is pinned
    np.testing.assert_array_equal(pinned.detach().numpy(), x.detach().numpy())
    pinned.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.ones((3, 4), np.float32))
    assert not pinned.cuda().is_pinned()
    with pytest.raises(RuntimeError, match="only dense CPU tensors can be pinned"):
        x.cuda().pin_memory()


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_the_fused_threshold_backward_is_the_generic_kernel(dtype):
    import cupy
    from ember_cupy import fused

    from ember.native.pointwise import unary

    grad = cupy.asarray(make_tensor((5, 7), dtype))
    output = cupy.asarray(make_tensor((5, 7), dtype, seed=1))
    output[0, 0], grad[1, 1], output[1, 1] = float("nan"), float("inf"), -1.0
    for threshold in (0, 0.5):
        got = fused.threshold_backward(cupy, grad, output, threshold)
        expected = unary._threshold_backward_kernel(cupy, grad, output, threshold)
        assert got.dtype == grad.dtype
        np.testing.assert_array_equal(got.get(), expected.get())


@pytest.mark.parametrize("nesterov", [False, True])
def test_the_fused_sgd_momentum_step_is_its_reference(nesterov):
    import cupy
    from ember_cupy import fused

    hyper = dict(lr=0.1, momentum=0.9, dampening=0.0, weight_decay=0.01, nesterov=nesterov)
    param = cupy.asarray(make_tensor((64,), "float64"))
    buf = cupy.zeros_like(param)
    ref_param, ref_buf = param.copy(), buf.copy()
    for step in range(3):
        grad = cupy.asarray(make_tensor((64,), "float64", seed=step + 1))
        fused.sgd_momentum_(param, grad, buf, first=step == 0, **hyper)
        fused.sgd_momentum_reference(cupy, ref_param, grad, ref_buf, first=step == 0, **hyper)
    np.testing.assert_allclose(param.get(), ref_param.get(), rtol=1e-12)
    np.testing.assert_allclose(buf.get(), ref_buf.get(), rtol=1e-12)


def test_a_module_moves_to_cuda_and_trains():
    model = ember.nn.Linear(4, 2).to("cuda")
    assert all(p.device.type == "cuda" for p in model.parameters())
    x = ember.randn(8, 4, device="cuda")
    model(x).relu().sum().backward()
    assert model.weight.grad.device == model.weight.device


def test_checkpoints_of_cuda_tensors_and_map_location():
    state = {"w": ember.tensor(make_tensor((2, 3)), device="cuda:0"), "step": 3}
    buffer = io.BytesIO()
    ember.save(state, buffer)
    loaded = ember.load(io.BytesIO(buffer.getvalue()))
    assert loaded["w"].device == ember.device("cuda:0") and loaded["step"] == 3
    np.testing.assert_array_equal(loaded["w"].cpu().numpy(), state["w"].cpu().numpy())
    on_cpu = ember.load(io.BytesIO(buffer.getvalue()), map_location="cpu")
    assert on_cpu["w"].device == ember.device("cpu")
    np.testing.assert_array_equal(on_cpu["w"].numpy(), state["w"].cpu().numpy())
    back = ember.load(io.BytesIO(buffer.getvalue()), map_location={"cuda:0": "cpu"})
    assert back["w"].device == ember.device("cpu")
