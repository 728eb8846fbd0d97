"""Steps of the differential fuzzer in reduced precision: norm layers, pooling,
resampling and attention on float16 and bfloat16 inputs (values up to where float16
intermediates overflow, which torch's float32 "opmath" does not), and ops inside
``autocast('cpu')`` regions with float32, low-precision and mixed operands.

PyTorch counterpart: none (torch is the oracle); the classes fixed in issue 25 (ember's
opmath, NOTE [ opmath ] in ember/opmath.py, and autocast's lists, ember/amp/state.py).
"""

import numpy as np
import torch
from fuzz_programs import Pair
from fuzz_steps import Step
from hypothesis import strategies as st

import ember

LOW = ["float16", "bfloat16"]


def _fresh(data, shape, dtype, name):
    """A new pair outside the pool: uniform(-3, 3) values, in a reduced dtype times a drawn
    scale (300: float16 squares pass 65504; 20000: float16 sums do; float32 keeps 1, where
    the sums of large values would cancel below float32's tolerance)."""
    scales = [1.0, 1.0, 300.0, 20000.0] if dtype in LOW else [1.0]
    scale = data.draw(st.sampled_from(scales), label=f"{name}_scale")
    seed = data.draw(st.integers(0, 2**16), label=f"{name}_seed")
    values = np.random.default_rng(seed).uniform(-3, 3, size=shape) * scale
    return Pair(ember.tensor(values).to(getattr(ember, dtype)), torch.tensor(values).to(getattr(torch, dtype)),
                f"{name}[{dtype}, x{scale:g}]")


# name: (input shapes, fn(lib, F, *tensors))
LAYERS = {
    "layer_norm": ([(2, 3, 5)], lambda lib, F, x: F.layer_norm(x, (5,))),
    "layer_norm affine": ([(2, 3, 5), (5,), (5,)], lambda lib, F, x, w, b: F.layer_norm(x, (5,), w, b)),
    "batch_norm": ([(4, 3, 5)], lambda lib, F, x: F.batch_norm(x, None, None, training=True)),
    "batch_norm eval": ([(4, 3, 5), (3,)], lambda lib, F, x, m: F.batch_norm(x, m, m.abs() + 1, training=False)),
    "group_norm": ([(2, 4, 5)], lambda lib, F, x: F.group_norm(x, 2)),
    "instance_norm": ([(2, 3, 6)], lambda lib, F, x: F.instance_norm(x)),
    "rms_norm": ([(2, 3, 5)], lambda lib, F, x: F.rms_norm(x, (5,))),
    "avg_pool2d": ([(1, 2, 5, 5)], lambda lib, F, x: F.avg_pool2d(x, 3, 2, 1)),
    "avg_pool1d": ([(1, 2, 7)], lambda lib, F, x: F.avg_pool1d(x, 3)),
    "adaptive_avg_pool2d": ([(1, 2, 5, 7)], lambda lib, F, x: F.adaptive_avg_pool2d(x, 3)),
    "adaptive_avg_pool2d global": ([(2, 3, 4, 4)], lambda lib, F, x: F.adaptive_avg_pool2d(x, 1)),
    "interpolate bilinear": ([(1, 2, 3, 4)], lambda lib, F, x: F.interpolate(x, scale_factor=1.7, mode="bilinear")),
    "interpolate area": ([(1, 2, 6, 6)], lambda lib, F, x: F.interpolate(x, size=(4, 4), mode="area")),
    "sdpa": ([(2, 3, 4)] * 3, lambda lib, F, q, k, v: F.scaled_dot_product_attention(q, k, v)),
    "sdpa causal": ([(2, 3, 4)] * 3, lambda lib, F, q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True)),
    "log_softmax": ([(3, 5)], lambda lib, F, x: F.log_softmax(x, -1)),
    "mse_loss": ([(3, 5), (3, 5)], lambda lib, F, x, y: F.mse_loss(x, y)),
    "cross_entropy": ([(4, 3)], lambda lib, F, x: F.cross_entropy(x, lib.tensor([0, 2, 1, 1]))),
    "gelu": ([(3, 5)], lambda lib, F, x: F.gelu(x, approximate="tanh")),
    "hardswish": ([(3, 5)], lambda lib, F, x: F.hardswish(x)),
    "linear": ([(3, 5), (2, 5), (2,)], lambda lib, F, x, w, b: F.linear(x, w, b)),
    "addmm": ([(3, 2), (3, 5), (5, 2)], lambda lib, F, c, a, b: lib.addmm(c, a, b, beta=0.5, alpha=1.5)),
    "mean": ([(3, 5)], lambda lib, F, x: x.mean(-1)),
}


def reduced_layer_step(data, pool):
    """A layer on new float16, bfloat16 (or float32) inputs: torch computes the reduced
    ones in float32 and rounds once, and so must ember (to within a rounding step: torch's
    bfloat16 batch norm computes its 1/std another way, its vectorized loops round some
    kernels between steps)."""
    name = data.draw(st.sampled_from(sorted(LAYERS)), label="layer")
    shapes, fn = LAYERS[name]
    dtype = data.draw(st.sampled_from(LOW + ["float32"]), label="layer_dtype")
    operands = tuple(_fresh(data, shape, dtype, f"a{i}") for i, shape in enumerate(shapes))
    label = f"{name}({', '.join(p.name for p in operands)})"
    return Step(label, lambda lib, *tensors: fn(lib, lib.nn.functional, *tensors), operands, reusable=False)


# name: (input shapes, fn(lib, F, *tensors))
AUTOCAST = {
    "linear": ([(3, 5), (2, 5), (2,)], lambda lib, F, x, w, b: F.linear(x, w, b)),
    "matmul": ([(2, 3, 5), (5, 2)], lambda lib, F, a, b: a @ b),
    "addmm": ([(3, 2), (3, 5), (5, 2)], lambda lib, F, c, a, b: lib.addmm(c, a, b)),
    "addmv": ([(3,), (3, 5), (5,)], lambda lib, F, c, a, b: lib.addmv(c, a, b)),
    "einsum": ([(3, 5), (5, 2)], lambda lib, F, a, b: lib.einsum("ij,jk->ik", a, b)),
    "einsum outer": ([(3,), (4,)], lambda lib, F, a, b: lib.einsum("i,j->ij", a, b)),
    "conv1d": ([(1, 2, 6), (3, 2, 3)], lambda lib, F, x, w: F.conv1d(x, w)),
    "sdpa": ([(2, 3, 4)] * 3, lambda lib, F, q, k, v: F.scaled_dot_product_attention(q, k, v)),
    "mse_loss": ([(3, 5), (3, 5)], lambda lib, F, x, y: F.mse_loss(x, y)),
    "smooth_l1_loss": ([(3, 5), (3, 5)], lambda lib, F, x, y: F.smooth_l1_loss(x, y)),
    "huber_loss": ([(3, 5), (3, 5)], lambda lib, F, x, y: F.huber_loss(x, y)),
    # (log-probabilities as drawn: a float16 log_softmax first would differ by a step and
    # carry it into kl_div's float32 result)
    "kl_div": ([(3, 5), (3, 5)], lambda lib, F, x, y: F.kl_div(x, y.abs(), reduction="batchmean")),
    "reflect pad": ([(1, 2, 5)], lambda lib, F, x: F.pad(x, (2, 1), mode="reflect")),
    "replicate pad": ([(1, 2, 3, 4)], lambda lib, F, x: F.pad(x, (1, 1, 2, 0), mode="replicate")),
    "inverse": ([(3, 3)], lambda lib, F, a: lib.inverse(a @ a.mT + 3 * lib.eye(3, dtype=a.dtype))),
    "cat": ([(2, 3), (1, 3)], lambda lib, F, a, b: lib.cat([a, b])),
    "layer_norm": ([(2, 5)], lambda lib, F, x: F.layer_norm(x, (5,))),
    "softmax": ([(2, 5)], lambda lib, F, x: F.softmax(x, -1)),
    "add": ([(2, 5), (2, 5)], lambda lib, F, a, b: a + b),
}


def autocast_step(data, pool):
    """An op inside ``autocast('cpu', dtype)`` on float32, low-precision or mixed operands:
    its result dtype (torch's lists, ember/amp/state.py), values and raise/no-raise."""
    name = data.draw(st.sampled_from(sorted(AUTOCAST)), label="autocast_op")
    shapes, fn = AUTOCAST[name]
    low = data.draw(st.sampled_from(LOW), label="autocast_dtype")
    operands = []
    for i, shape in enumerate(shapes):
        dtype = data.draw(st.sampled_from(["float32", low]), label=f"operand{i}_dtype")
        seed = data.draw(st.integers(0, 2**16), label=f"operand{i}_seed")
        values = np.random.default_rng(seed).uniform(-2, 2, size=shape)
        operands.append(Pair(ember.tensor(values).to(getattr(ember, dtype)),
                             torch.tensor(values).to(getattr(torch, dtype)), f"a{i}[{dtype}]"))

    def run(lib, *tensors):
        with lib.autocast("cpu", dtype=getattr(lib, low)):
            return fn(lib, lib.nn.functional, *tensors)

    return Step(f"autocast({low}): {name}({', '.join(p.name for p in operands)})", run, tuple(operands),
                reusable=False)


# Families and their weights, added to fuzz_steps.STEPS by test_differential.py.
REDUCED_STEPS = [(reduced_layer_step, 2), (autocast_step, 2)]
