"""One optimizer step over the parameters of an MLP 784-512-512-10 (about 670K floats),
ember's optimizers against torch.optim's with the same parameters and gradients.

PyTorch counterpart: torch/optim (v2.13) on CPU. Each optimizer's default (the
single-tensor loop, torch's default on CPU) is compared with torch's default; SGD, Adam
and AdamW also with ``foreach=True`` and ``fused=True`` on both sides. One line per
optimizer and path.
"""

from common import interleaved, libraries, report_ms
from overhead import parse_args

SHAPES = [(512, 784), (512,), (512, 512), (512,), (10, 512), (10,)]
OPTIMIZERS = [("SGD", dict(lr=0.01, momentum=0.9)), ("Adam", dict(lr=1e-3)), ("AdamW", dict(lr=1e-3)),
              ("RMSprop", dict(lr=1e-3)), ("Adagrad", dict(lr=1e-2))]
for _name, _kwargs in OPTIMIZERS[:3]:
    OPTIMIZERS += [(_name, dict(_kwargs, foreach=True)), (_name, dict(_kwargs, fused=True))]


def make_step(lib, name, kwargs, values):
    params = [lib.tensor(v).requires_grad_() for v in values]
    for p, v in zip(params, values):
        p.grad = lib.tensor(v * 0.01)
    optimizer = getattr(lib.optim, name)(params, **kwargs)
    optimizer.step()  # create the state outside the timing
    return optimizer.step


def main(threads):
    np, torch, ember = libraries(threads)
    rng = np.random.default_rng(0)
    values = [rng.standard_normal(shape).astype(np.float32) for shape in SHAPES]
    for name, kwargs in OPTIMIZERS:
        steps = {"ember": make_step(ember, name, kwargs, values), "torch": make_step(torch, name, kwargs, values)}
        path = "foreach" if kwargs.get("foreach") else "fused" if kwargs.get("fused") else "default"
        report_ms(f"{name} step ({path}), MLP parameters (ms)", threads, interleaved(steps, rounds=15, inner=5))


if __name__ == "__main__":
    main(parse_args().threads)
