"""One optimizer step over the parameters of an MLP 784-512-512-10 (about 670K floats),
ember's optimizers against torch.optim's with the same parameters and gradients.

PyTorch counterpart: torch/optim (v2.13) on CPU. Each optimizer's default is compared
with torch's default (torch: the single-tensor loop; ember: its fused path, bit-identical
to its loop, NOTE [ ember's default is the fused path ] in ember_optim/fused.py), then
each ``foreach=True`` and ``fused=True`` path torch has, on both sides, and ember's loop
(``foreach=False``) against torch's default. One line per optimizer and path.
"""

from common import interleaved, libraries, report_ms
from overhead import parse_args

SHAPES = [(512, 784), (512,), (512, 512), (512,), (10, 512), (10,)]
OPTIMIZERS = [("SGD", dict(lr=0.01, momentum=0.9)), ("Adam", dict(lr=1e-3)), ("AdamW", dict(lr=1e-3)),
              ("RMSprop", dict(lr=1e-3)), ("Adagrad", dict(lr=1e-2))]
FLAGS = {"SGD": ("foreach", "fused"), "Adam": ("foreach", "fused"), "AdamW": ("foreach", "fused"),
         "RMSprop": ("foreach",), "Adagrad": ("foreach", "fused")}
for _name, _kwargs in OPTIMIZERS[:5]:
    OPTIMIZERS += [(_name, dict(_kwargs, **{flag: True})) for flag in FLAGS[_name]]
    OPTIMIZERS.append((_name, dict(_kwargs, foreach=False)))


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
        # ember's loop (foreach=False) is compared with torch's default, its loop too
        theirs = {k: v for k, v in kwargs.items() if k != "foreach" or v}
        steps = {"ember": make_step(ember, name, kwargs, values), "torch": make_step(torch, name, theirs, values)}
        flag = kwargs.get("foreach")
        path = {True: "foreach", False: "loop"}.get(flag, "fused" if kwargs.get("fused") else "default")
        report_ms(f"{name} step ({path}), MLP parameters (ms)", threads, interleaved(steps, rounds=15, inner=5))


if __name__ == "__main__":
    main(parse_args().threads)
