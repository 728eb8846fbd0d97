"""ember.func.vmap (batch rules) against the per-sample Python loop it replaced and
against torch.func.vmap, on the same data:

- per-sample gradients of an MLP 32-64-10 (``vmap(grad(loss), in_dims=(None, 0, 0))``,
  functorch's per-sample-grads tutorial), batch 64;
- an ensemble of 8 MLPs 32-64-10 over one batch of 64 (``stack_module_state`` +
  ``functional_call``, the model-ensembling tutorial);
- a batched elementwise + matmul function, ``(x @ W).tanh() * x.sum() + b``, batch 256.

    python bench/vmap.py [threads]

One JSON line per workload: median ms of ember's vmap, of the loop (ember, one call per
sample, stacked: what ember.func.vmap did before it batched) and of torch.func.vmap,
with the ratios vmap/loop and vmap/torch. The results are checked equal first.
"""

from common import interleaved, libraries, threads_and_profile

THREADS = threads_and_profile()[0]
np, torch, ember = libraries(THREADS)
rng = np.random.default_rng(0)


def loop(func, in_dims):
    """The per-sample loop: ``func`` on each sample's slices, results stacked."""
    def run(*args):
        size = next(a.shape[d] for a, d in zip(_leaves(args), _dims(args, in_dims)) if d is not None)
        results = []
        for i in range(size):
            sample = [a if d is None else a.select(d, i) for a, d in zip(_leaves(args), _dims(args, in_dims))]
            results.append(func(*_rebuild(args, sample)))
        return _stack(results)
    return run


def _leaves(args):
    return ember.utils._pytree.tree_flatten(args)[0]


def _dims(args, in_dims):
    dims = []
    for arg, dim in zip(args, in_dims):
        dims += [dim] * len(ember.utils._pytree.tree_flatten(arg)[0])
    return dims


def _rebuild(args, leaves):
    return ember.utils._pytree.tree_unflatten(leaves, ember.utils._pytree.tree_flatten(args)[1])


def _stack(results):
    leaves = [ember.utils._pytree.tree_flatten(r)[0] for r in results]
    stacked = [ember.stack(list(column)) for column in zip(*leaves)]
    return ember.utils._pytree.tree_unflatten(stacked, ember.utils._pytree.tree_flatten(results[0])[1])


def _mlp(lib, seed):
    lib.manual_seed(seed)
    return lib.nn.Sequential(lib.nn.Linear(32, 64), lib.nn.ReLU(), lib.nn.Linear(64, 10))


def per_sample_grads(lib):
    model = _mlp(lib, 0)
    params = {k: v.detach() for k, v in model.named_parameters()}

    def loss(p, x, y):
        out = lib.func.functional_call(model, p, (x.unsqueeze(0),))
        return lib.nn.functional.cross_entropy(out, y.unsqueeze(0))
    x = lib.tensor(rng_data["x"])
    y = lib.tensor(rng_data["y"])
    return lib.func.grad(loss), (params, x, y), (None, 0, 0)


def ensemble(lib):
    models = [_mlp(lib, seed) for seed in range(8)]
    params, buffers = lib.func.stack_module_state(models)
    params = {k: v.detach() for k, v in params.items()}

    def run(p, b, x):
        return lib.func.functional_call(models[0], (p, b), (x,))
    return run, (params, buffers, lib.tensor(rng_data["x"])), (0, 0, None)


def elementwise_matmul(lib):
    def f(x, w, b):
        return (x @ w).tanh() * x.sum() + b
    return f, (lib.tensor(rng_data["rows"]), lib.tensor(rng_data["w"]), lib.tensor(rng_data["b"])), (0, None, None)


rng_data = {"x": rng.standard_normal((64, 32)).astype(np.float32), "y": rng.integers(0, 10, 64),
            "rows": rng.standard_normal((256, 32)).astype(np.float32),
            "w": rng.standard_normal((32, 32)).astype(np.float32), "b": rng.standard_normal(32).astype(np.float32)}


def _close(a, b):
    for m, t in zip(ember.utils._pytree.tree_flatten(a)[0], torch.utils._pytree.tree_flatten(b)[0]):
        np.testing.assert_allclose(m.detach().numpy(), t.detach().numpy(), rtol=1e-4, atol=1e-5)


def main():
    import json

    for name, build in [("per-sample grads, MLP 32-64-10, batch 64", per_sample_grads),
                        ("ensemble of 8 MLPs 32-64-10, batch 64", ensemble),
                        ("elementwise + matmul, batch 256", elementwise_matmul)]:
        fn, args, in_dims = build(ember)
        t_fn, t_args, _ = build(torch)
        workloads = {"vmap": lambda: ember.func.vmap(fn, in_dims)(*args),
                     "loop": lambda: loop(fn, in_dims)(*args),
                     "torch": lambda: torch.func.vmap(t_fn, in_dims)(*t_args)}
        _close(workloads["vmap"](), workloads["torch"]())
        _close(workloads["loop"](), workloads["torch"]())
        medians = interleaved(workloads, rounds=7, inner=3)
        print(json.dumps({"benchmark": name, "threads": THREADS,
                          **{k: round(v * 1e3, 3) for k, v in medians.items()},
                          "vmap/loop": round(medians["vmap"] / medians["loop"], 3),
                          "vmap/torch": round(medians["vmap"] / medians["torch"], 2)}))


if __name__ == "__main__":
    main()
