"""Run by each of 2 ranks (tests/core/nn/parallel/test_distributed.py): ember's
DistributedDataParallel against big-batch training and against torch's DDP with the
gloo backend, on the same weights and data, in float64. Writes ``rank-<N>.json`` into
argv[1]: the checks run and the failures."""

import os
import sys

import numpy as np
import torch
import torch.distributed as tdist

import ember
import ember.distributed as dist
from ember.nn.parallel import DistributedDataParallel as DDP
from ember_data.datasets.digits import Digits

TESTS = os.path.join(os.path.dirname(__file__), "..", "..", "..")
sys.path[:0] = [os.path.join(TESTS, "zoo", "resnet"), os.path.join(TESTS, "plugins", "mpi")]
from ember_zoo_resnet import cifar  # noqa: E402
from rank_checks import RankChecks, join_mpi_and_gloo  # noqa: E402
from torch_reference import TorchBasicBlock, TorchResNet  # noqa: E402

torch.set_num_threads(1)
RANK, SIZE = join_mpi_and_gloo()

B, STEPS, TOL = 8, 3, 1e-10
digits = Digits("train")
X, Y = digits.data.astype(np.float64), digits.targets.astype(np.int64)
checks = RankChecks()




def torch_resnet():
    torch.manual_seed(0)  # the same weights on every rank
    return TorchResNet(TorchBasicBlock, [1, 1, 1], num_classes=10, in_channels=1, stem="cifar",
                       stages=(16, 32, 64)).double()


def ember_twin(torch_model):
    model = cifar.resnet8_cifar(in_channels=1, num_classes=10).double()
    model.load_state_dict({k: ember.from_numpy(v.detach().numpy().copy()) for k, v in
                           torch_model.state_dict().items()})
    return model


def batch(step, lo, hi):
    """Samples [lo, hi) of step ``step``'s global batch of 2B."""
    start = step * B * SIZE
    return X[start + lo:start + hi], Y[start + lo:start + hi]


def mine(step):
    return batch(step, RANK * B, (RANK + 1) * B)


def train_ember(model, data_of_step, wrap=None):
    net = wrap(model) if wrap else model
    opt = ember.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    for step in range(STEPS):
        x, y = data_of_step(step)
        opt.zero_grad()
        ember.nn.functional.cross_entropy(net(ember.from_numpy(x)), ember.from_numpy(y)).backward()
        opt.step()
    return {k: v.numpy() for k, v in model.state_dict().items()}


def train_torch(model, data_of_step, wrap=None):
    net = wrap(model) if wrap else model
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    for step in range(STEPS):
        x, y = data_of_step(step)
        opt.zero_grad()
        torch.nn.functional.cross_entropy(net(torch.from_numpy(x)), torch.from_numpy(y)).backward()
        opt.step()
    return {k: v.detach().numpy() for k, v in model.state_dict().items()}


def worst(a, b):
    assert a.keys() == b.keys(), (sorted(a), sorted(b))
    return max(float(np.abs(a[k].astype(np.float64) - b[k].astype(np.float64)).max()) for k in a)


@checks.run("DDP + SyncBatchNorm with batch B per rank == one process with batch 2B (ember and torch)")
def _():
    reference = torch_resnet()
    big_ember = train_ember(ember_twin(reference), lambda s: batch(s, 0, SIZE * B))
    big_torch = train_torch(torch_resnet(), lambda s: batch(s, 0, SIZE * B))
    model = ember.nn.SyncBatchNorm.convert_sync_batchnorm(ember_twin(reference))
    ddp = train_ember(model, mine, wrap=DDP)
    gaps = worst(ddp, big_ember), worst(ddp, big_torch)
    return float(max(gaps)) < TOL or gaps


@checks.run("DDP == torch DDP (gloo) on the same weights and data, BatchNorm per rank")
def _():
    ours = train_ember(ember_twin(torch_resnet()), mine, wrap=lambda m: DDP(m, bucket_cap_mb=0.02))
    theirs = train_torch(torch_resnet(), mine, wrap=lambda m: torch.nn.parallel.DistributedDataParallel(
        m, bucket_cap_mb=0.02))
    gap = worst(ours, theirs)
    return gap < TOL or gap


def accumulate(lib, model, ddp):
    """Two micro-batches under no_sync, a third synced, one step (per rank)."""
    opt = (ember.optim.SGD if lib is ember else torch.optim.SGD)(model.parameters(), lr=0.1)
    f = ember.nn.functional if lib is ember else torch.nn.functional
    as_tensor = ember.from_numpy if lib is ember else torch.from_numpy
    opt.zero_grad()
    for micro in range(3):
        x, y = batch(micro, RANK * B, (RANK + 1) * B)
        if micro < 2:
            with ddp.no_sync():
                f.cross_entropy(ddp(as_tensor(x)), as_tensor(y)).backward()
        else:
            f.cross_entropy(ddp(as_tensor(x)), as_tensor(y)).backward()
    opt.step()
    return {k: (v.numpy() if lib is ember else v.detach().numpy()) for k, v in model.state_dict().items()}


@checks.run("no_sync gradient accumulation == torch's")
def _():
    ember_model, torch_model = ember_twin(torch_resnet()), torch_resnet()
    ours = accumulate(ember, ember_model, DDP(ember_model))
    theirs = accumulate(torch, torch_model, torch.nn.parallel.DistributedDataParallel(torch_model))
    gap = worst(ours, theirs)
    # and the local gradients really were not averaged inside no_sync
    local = ember_twin(torch_resnet())
    wrapped = DDP(local)
    x, y = mine(0)
    with wrapped.no_sync():
        ember.nn.functional.cross_entropy(wrapped(ember.from_numpy(x)), ember.from_numpy(y)).backward()
    grads = ember.stack([p.grad.reshape(-1)[:4] for p in local.parameters()][:1])
    everyone = [None] * SIZE
    dist.all_gather_object(everyone, grads)
    return (gap < TOL and not np.allclose(everyone[0].numpy(), everyone[1].numpy())) or gap


def heads(lib):
    nn = ember.nn if lib is ember else torch.nn
    (ember if lib is ember else torch).manual_seed(0)

    class Heads(nn.Module):
        def __init__(self):
            super().__init__()
            self.trunk = nn.Linear(4, 4)
            self.a = nn.Linear(4, 2)
            self.b = nn.Linear(4, 2)
            self.never = nn.Linear(4, 2)

        def forward(self, x, use_b):
            h = self.trunk(x).tanh()
            return self.a(h) + self.b(h) if use_b else self.a(h)
    model = Heads().double()
    return model


@checks.run("find_unused_parameters: a head used on one rank only, one never used == torch's")
def _():
    torch_model = heads(torch)
    ember_model = heads(ember)
    ember_model.load_state_dict({k: ember.from_numpy(v.detach().numpy().copy())
                                 for k, v in torch_model.state_dict().items()})
    x = np.random.default_rng(RANK).standard_normal((5, 4))
    results = {}
    torch_ddp = torch.nn.parallel.DistributedDataParallel
    for lib, model, wrap in ((ember, ember_model, DDP), (torch, torch_model, torch_ddp)):
        ddp = wrap(model, find_unused_parameters=True)
        as_tensor = ember.from_numpy if lib is ember else torch.from_numpy
        for _ in range(2):  # twice: the second iteration must not trip over the first
            ddp(as_tensor(x), use_b=RANK == 1).sum().backward()
        results[lib.__name__] = {n: (None if p.grad is None else p.grad.numpy() if lib is ember
                                     else p.grad.detach().numpy()) for n, p in model.named_parameters()}
    ours, theirs = results["ember"], results["torch"]
    if {n for n, g in ours.items() if g is None} != {n for n, g in theirs.items() if g is None}:
        return {n: g is None for n, g in ours.items()}, {n: g is None for n, g in theirs.items()}
    gap = max(float(np.abs(ours[n] - theirs[n]).max()) for n in ours if ours[n] is not None)
    return gap < TOL or gap


@checks.run("without find_unused_parameters an unused parameter is torch's error at the next forward")
def _():
    model = heads(ember)
    ddp = DDP(model)
    x = ember.ones(2, 4, dtype=ember.float64)
    ddp(x, use_b=True).sum().backward()  # `never` never reports: the reduction cannot finish
    try:
        ddp(x, use_b=True)
    except RuntimeError as exc:
        return "Expected to have finished reduction in the prior iteration" in str(exc) or str(exc)
    return "no error"


@checks.run("construction broadcasts rank 0's parameters and buffers; forward broadcasts buffers")
def _():
    ember.manual_seed(RANK)  # different weights on each rank
    model = ember.nn.Sequential(ember.nn.Linear(3, 4), ember.nn.BatchNorm1d(4))
    with ember.no_grad():
        model[1].running_mean.fill_(float(RANK + 5))
    ddp = DDP(model)
    states = [None] * SIZE
    dist.all_gather_object(states, dict(model.state_dict()))
    same = all(np.array_equal(states[0][k].numpy(), states[1][k].numpy()) for k in states[0])
    with ember.no_grad():
        model[1].running_mean.fill_(float(RANK + 7))
    model.eval()
    ddp(ember.ones(2, 3))
    keys = list(ddp.state_dict())
    return (same and model[1].running_mean.tolist() == [7.0] * 4 and keys[0] == "module.0.weight"
            and ddp.module is model) or (same, model[1].running_mean.tolist(), keys)


@checks.run("SyncBatchNorm forward, backward and running statistics == torch BatchNorm over the global batch")
def _():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((SIZE * 3, 4, 5, 5)) * 2 + 1
    dy = rng.standard_normal(x.shape)
    weight, bias = rng.standard_normal(4), rng.standard_normal(4)
    reference = torch.nn.BatchNorm2d(4).double()
    with torch.no_grad():
        reference.weight.copy_(torch.from_numpy(weight))
        reference.bias.copy_(torch.from_numpy(bias))
    xt = torch.from_numpy(x).requires_grad_()
    expected = reference(xt)
    (expected * torch.from_numpy(dy)).sum().backward()
    sync = ember.nn.SyncBatchNorm(4).double()
    with ember.no_grad():
        sync.weight.copy_(ember.from_numpy(weight))
        sync.bias.copy_(ember.from_numpy(bias))
    part = slice(RANK * 3, (RANK + 1) * 3)
    xe = ember.from_numpy(x[part].copy()).requires_grad_()
    out = sync(xe)
    (out * ember.from_numpy(dy[part].copy())).sum().backward()
    grads = ember.cat([sync.weight.grad, sync.bias.grad])
    dist.all_reduce(grads)  # local parameter gradients add up to the global ones
    gaps = [np.abs(out.detach().numpy() - expected[part].detach().numpy()).max(),
            np.abs(xe.grad.numpy() - xt.grad[part].numpy()).max(),
            np.abs(grads.numpy() - torch.cat([reference.weight.grad, reference.bias.grad]).numpy()).max(),
            np.abs(sync.running_var.numpy() - reference.running_var.detach().numpy()).max(),
            np.abs(sync.running_mean.numpy() - reference.running_mean.detach().numpy()).max()]
    return float(max(gaps)) < TOL or gaps


dist.barrier()
checks.write(sys.argv[1], RANK)
tdist.destroy_process_group()
dist.destroy_process_group()
