"""Single operators against PyTorch at one thread: forward, and forward + backward where
the op has a gradient, on one realistic size each (2^15 to 2^20 elements), the ratios
printed worst first.

Issue 26 asks every operator it added to run within 1.5x of torch at one thread. Each
case builds the same inputs (NumPy's generator, seed 0) in both libraries and calls the
op by the same path (``special.i1e``, ``nn.functional.grid_sample``, a Tensor method);
the two libraries alternate round by round in one process (common.interleaved), and
each sample repeats a call for about 20 ms. The header names the CPU, NumPy's BLAS and
its kernel, the thread count and the load, which on a shared machine moves the figures
by tens of percent: repeat a run and quote the range.

Run alone: ``python bench/op_speed.py [THREADS] [-k SUBSTRING ...] [--cpu-time]`` (a case
runs when its name contains one of the substrings; ``--cpu-time`` counts the process's CPU
time instead of wall time, steadier when the machine has more work than cores).
"""

import os
import sys
import time

from common import interleaved, libraries

# shapes: a pointwise input of 2^18 values, images (8, 16, 64, 64) = 2^19
POINTWISE = (512, 512)
IMAGE = (8, 16, 64, 64)


def _uniform(np, shape, low, high, seed=0):
    return np.random.default_rng(seed).uniform(low, high, shape)


def _normal(np, shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def _attr(lib, path):
    for part in path.split("."):
        lib = getattr(lib, part)
    return lib


def pointwise(path, low=-5.0, high=5.0, grad=True):
    """A case calling ``lib.<path>(x)`` on float32 values uniform in [low, high)."""
    return lambda np: ([_uniform(np, POINTWISE, low, high)], lambda lib, x: _attr(lib, path)(x), grad)


def _grid(np):
    """An affine-jittered sampling grid over IMAGE, a little past the edges."""
    n, _, h, w = IMAGE
    ys, xs = np.meshgrid(np.linspace(-1.1, 1.1, h), np.linspace(-1.1, 1.1, w), indexing="ij")
    base = np.stack([xs, ys], -1)[None].repeat(n, 0)
    return base + 0.05 * _normal(np, base.shape, seed=1)


def grid_sample(mode, padding="zeros"):
    def build(np):
        def call(lib, x, g):
            return lib.nn.functional.grid_sample(x, g, mode=mode, padding_mode=padding, align_corners=False)
        return [_normal(np, IMAGE), _grid(np)], call, True
    return build


def _householder(np):
    a = _normal(np, (64, 128, 64))
    tau = _uniform(np, (64, 64), 0.5, 1.5, seed=1)
    return [a, tau], lambda lib, a, tau: lib.linalg.householder_product(a, tau), True


def _constant(array):
    """``lib -> lib.tensor(array)``, made once per library (an index is not timed)."""
    made = {}

    def tensor(lib):
        if lib not in made:
            made[lib] = lib.tensor(array)
        return made[lib]
    return tensor


def _index_reduce(reduce):
    def build(np):
        x = _normal(np, (4096, 64))
        source = _normal(np, (16384, 64), seed=1)
        index = _constant(np.random.default_rng(2).integers(0, 4096, 16384))

        def call(lib, x, source):
            return x.index_reduce(0, index(lib), source, reduce)
        return [x, source], call, True
    return build


def _conv3d(np):
    x = _normal(np, (2, 16, 16, 32, 32))
    w = _normal(np, (32, 16, 3, 3, 3), seed=1) * 0.1
    return [x, w], lambda lib, x, w: lib.nn.functional.conv3d(x, w, padding=1), True


def _pool3d(path, **kwargs):
    def build(np):
        return ([_normal(np, (4, 16, 16, 32, 32))],
                lambda lib, x: _attr(lib, path)(x, **kwargs), True)
    return build


def _cumulative(name):
    def build(np):
        def call(lib, x):
            out = getattr(lib, name)(x, 1)
            return out[0] if isinstance(out, tuple) else out
        return [_normal(np, POINTWISE)], call, True
    return build


def _gather(np):
    index = _constant(np.random.default_rng(3).integers(0, POINTWISE[1], POINTWISE))

    def call(lib, x):
        return x.gather(1, index(lib))
    return [_normal(np, POINTWISE)], call, True


def _two(path, shapes, grad=True):
    def build(np):
        return [_normal(np, s, seed=i) for i, s in enumerate(shapes)], lambda lib, a, b: _attr(lib, path)(a, b), grad
    return build


CASES = {
    # nn.functional and modules
    "grid_sample bilinear": grid_sample("bilinear"),
    "grid_sample nearest": grid_sample("nearest"),
    "grid_sample bicubic": grid_sample("bicubic"),
    "grid_sample bilinear reflection": grid_sample("bilinear", "reflection"),
    "pdist (1024, 64)": lambda np: ([_normal(np, (1024, 64))], lambda lib, x: lib.nn.functional.pdist(x), True),
    "cdist (512, 64) x (512, 64)": _two("cdist", [(512, 64), (512, 64)]),
    "conv3d (2,16,16,32,32) 3x3x3": _conv3d,
    "max_pool3d 2": _pool3d("nn.functional.max_pool3d", kernel_size=2),
    "avg_pool3d 2": _pool3d("nn.functional.avg_pool3d", kernel_size=2),
    "cosine_similarity (256, 512)": _two("nn.functional.cosine_similarity", [(256, 512), (256, 512)]),
    "normalize (256, 512)": lambda np: ([_normal(np, (256, 512))], lambda lib, x: lib.nn.functional.normalize(x),
                                        True),
    # cumulative, indexing
    "cummax (512, 512) dim 1": _cumulative("cummax"),
    "cummin (512, 512) dim 1": _cumulative("cummin"),
    "logcumsumexp (512, 512) dim 1": _cumulative("logcumsumexp"),
    "gather (512, 512) dim 1": _gather,
    "index_reduce prod": _index_reduce("prod"),
    "index_reduce amax": _index_reduce("amax"),
    "index_reduce mean": _index_reduce("mean"),
    # linalg
    "householder_product (64, 128, 64)": _householder,
    # special functions, 2^18 values
    "special.i0e": pointwise("special.i0e", -20, 20),
    "special.i1e": pointwise("special.i1e", -20, 20),
    "special.i0": pointwise("special.i0", -20, 20),
    "special.i1": pointwise("special.i1", -20, 20),
    "special.ndtr": pointwise("special.ndtr"),
    "special.ndtri": pointwise("special.ndtri", 0.001, 0.999),
    "special.log_ndtr": pointwise("special.log_ndtr", -10, 10),
    "special.erfcx": pointwise("special.erfcx", -5, 20),
    "special.erfinv": pointwise("special.erfinv", -0.99, 0.99),
    "special.digamma": pointwise("special.digamma", 0.1, 20),
    "special.gammaln": pointwise("special.gammaln", 0.1, 20),
    "special.entr": pointwise("special.entr", 0, 2),
    "special.sinc": pointwise("special.sinc"),
    "special.bessel_j0": pointwise("special.bessel_j0", 0, 30, grad=False),
    "special.bessel_j1": pointwise("special.bessel_j1", 0, 30, grad=False),
    "special.zeta": _two("special.zeta", [POINTWISE, POINTWISE], grad=False),
    "special.xlog1py": _two("special.xlog1py", [POINTWISE, POINTWISE], grad=False),
    "lgamma": pointwise("lgamma", 0.1, 20),
    "logit": pointwise("logit", 0.01, 0.99),
    "hypot": _two("hypot", [POINTWISE, POINTWISE]),
    "logaddexp": _two("logaddexp", [POINTWISE, POINTWISE]),
}

# NOTE: the zeta and xlog1py cases draw normal values; negative ones give NaN in both
# libraries, which is the same work for either (torch's kernels do not branch out early).


def tensors(lib, arrays, grad, dtype):
    return [lib.tensor(a.astype(dtype), requires_grad=grad) for a in arrays]


def workloads(lib, np, build, dtype):
    """``(forward, forward + backward or None)`` for one library."""
    arrays, call, grad = build(np)
    inputs = tensors(lib, arrays, False, dtype)

    def forward():
        with lib.no_grad():
            call(lib, *inputs)
    if not grad:
        return forward, None
    leaves = tensors(lib, arrays, True, dtype)
    out = call(lib, *leaves)
    seed = lib.tensor(_normal(np, tuple(out.shape), seed=5).astype(dtype))

    def both():
        for leaf in leaves:
            leaf.grad = None
        call(lib, *leaves).backward(seed)
    return forward, both


def inner_count(fns, target=0.02):
    """Calls per sample so that the slower side runs about ``target`` seconds."""
    longest = 0.0
    for fn in fns:
        fn()  # warm-up: imports, caches, numba's JIT
        start = time.perf_counter()
        fn()
        longest = max(longest, time.perf_counter() - start)
    return max(1, min(200, int(target / max(longest, 1e-6))))


def machine(np):
    """The header: CPU model, NumPy's BLAS and kernel, threads, load."""
    from threadpoolctl import threadpool_info

    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")),
               "?")
    blas = next((f"{i['internal_api']} {i.get('version')} ({i.get('architecture')})" for i in threadpool_info()
                 if i["user_api"] == "blas"), "?")
    return f"cpu: {cpu}; numpy BLAS: {blas}; load: {os.getloadavg()}"


def main():
    args = sys.argv[1:]
    threads = int(args[0]) if args and args[0].isdigit() else 1
    wanted = [args[i + 1] for i, a in enumerate(args) if a == "-k" and i + 1 < len(args)]
    clock = time.process_time if "--cpu-time" in args else time.perf_counter
    np, torch, ember = libraries(threads)
    print(f"# {machine(np)}; threads: {threads}; torch {torch.__version__}; clock: {clock.__name__}")
    rows = []
    for name, build in CASES.items():
        if wanted and not any(w in name for w in wanted):
            continue
        ours, theirs = workloads(ember, np, build, "float32"), workloads(torch, np, build, "float32")
        for label, e, t in (("fwd", ours[0], theirs[0]), ("fwd+bwd", ours[1], theirs[1])):
            if e is None:
                continue
            inner = inner_count((e, t))
            medians = interleaved({"ember": e, "torch": t}, rounds=5, inner=inner, clock=clock)
            row = (medians["ember"] / medians["torch"], f"{name} {label}", medians["ember"] * 1e3,
                   medians["torch"] * 1e3)
            rows.append(row)
            print(f"  {row[1]:48s} ember {row[2]:9.3f} ms  torch {row[3]:8.3f} ms  ratio {row[0]:7.2f}", flush=True)
    print(f"# worst first (load at the end: {os.getloadavg()})")
    for ratio, label, ours_ms, theirs_ms in sorted(rows, reverse=True):
        print(f"{ratio:8.2f}  {label:48s} {ours_ms:9.3f} ms / {theirs_ms:8.3f} ms")


if __name__ == "__main__":
    main()
