"""Run by each of 2 or 3 ranks (test_fully_sharded_data_parallel.py): ember's
FullyShardedDataParallel trained on each rank's part of the batch against torch trained
in one process on the whole batch (the oracle), in float64; its full state dict's keys
and flat-parameter shards against torch's FSDP (gloo, CPU) on the same model; and the
bytes each rank holds. Writes ``rank-<N>.json`` into argv[1]."""

import functools
import os
import sys

import numpy as np
import torch
import torch.distributed as tdist
from torch.distributed.fsdp import FullyShardedDataParallel as TorchFSDP
from torch.distributed.fsdp import wrap as torch_wrap

import ember
import ember.distributed as dist
from ember.distributed.fsdp import FullyShardedDataParallel as FSDP
from ember.distributed.fsdp import ShardingStrategy, StateDictType, wrap
from ember.distributed.fsdp.flat_param import UNSHARDED, reset_peak

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "plugins", "mpi"))
from rank_checks import RankChecks, join_mpi_and_gloo  # noqa: E402

torch.set_num_threads(1)
RANK, SIZE = join_mpi_and_gloo()

B, STEPS, TOL = 4, 3, 1e-10
rng = np.random.default_rng(0)
X = rng.standard_normal((STEPS, SIZE * B, 6))
Y = rng.integers(0, 3, (STEPS, SIZE * B))
checks = RankChecks()


def build(nn):
    """Units of odd sizes (49, 90 with the LayerNorm, 30) so the shards need padding."""
    return nn.Sequential(nn.Linear(6, 7), nn.Tanh(), nn.Sequential(nn.Linear(7, 9), nn.LayerNorm(9)), nn.Tanh(),
                         nn.Linear(9, 3)).double()


def torch_model():
    torch.manual_seed(0)
    return build(torch.nn)


def ember_twin(reference):
    model = build(ember.nn)
    model.load_state_dict({k: ember.from_numpy(v.detach().numpy().copy()) for k, v in reference.state_dict().items()})
    return model


def optimizer(lib, params, kind):
    optim = ember.optim if lib is ember else torch.optim
    return optim.SGD(params, lr=0.1, momentum=0.9) if kind == "sgd" else optim.Adam(params, lr=0.01)


def train_torch_big_batch(kind):
    model = torch_model()
    opt = optimizer(torch, model.parameters(), kind)
    for step in range(STEPS):
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model(torch.from_numpy(X[step])), torch.from_numpy(Y[step])).backward()
        opt.step()
    return {k: v.detach().numpy() for k, v in model.state_dict().items()}


def mine(step):
    part = slice(RANK * B, (RANK + 1) * B)
    return X[step, part], Y[step, part]


def train_ember_fsdp(kind, **fsdp_kwargs):
    model = FSDP(ember_twin(torch_model()), **fsdp_kwargs)
    opt = optimizer(ember, model.parameters(), kind)
    for step in range(STEPS):
        x, y = mine(step)
        opt.zero_grad()
        ember.nn.functional.cross_entropy(model(ember.from_numpy(x)), ember.from_numpy(y)).backward()
        opt.step()
    return model, opt


def gap(ours, theirs):
    if list(ours) != list(theirs):
        return f"keys {list(ours)} != {list(theirs)}"
    return max(float(np.abs(ours[k].numpy() - theirs[k]).max()) for k in ours)


LINEAR = wrap.ModuleWrapPolicy({ember.nn.Linear})
BY_SIZE = functools.partial(wrap.size_based_auto_wrap_policy, min_num_params=40)
CASES = [(ShardingStrategy.FULL_SHARD, LINEAR, "a unit per Linear"),
         (ShardingStrategy.SHARD_GRAD_OP, BY_SIZE, "units of 40 parameters or more"),
         (ShardingStrategy.NO_SHARD, None, "root only"), (ShardingStrategy.FULL_SHARD, None, "root only")]
for kind in ("sgd", "adam"):
    expected = train_torch_big_batch(kind)
    for strategy, policy, name in CASES:

        @checks.run(f"{kind}: {strategy.name} ({name}), {STEPS} steps on B per rank == torch on {SIZE}B in one process")
        def _():
            model, _ = train_ember_fsdp(kind, sharding_strategy=strategy, auto_wrap_policy=policy)
            difference = gap(model.state_dict(), expected)
            return difference < TOL or difference


def torch_fsdp(policy):
    return TorchFSDP(torch_model(), auto_wrap_policy=policy, device_id=torch.device("cpu"))


@checks.run("clip_grad_norm_ over all ranks' shards == torch's clip_grad_norm_ in one process (2, inf)")
def _():
    gaps = []
    for norm_type in (2.0, float("inf")):
        reference = torch_model()
        torch.nn.functional.cross_entropy(reference(torch.from_numpy(X[0])), torch.from_numpy(Y[0])).backward()
        expected_norm = float(torch.nn.utils.clip_grad_norm_(reference.parameters(), 0.05, norm_type))
        model = FSDP(ember_twin(torch_model()), auto_wrap_policy=LINEAR)
        x, y = mine(0)
        ember.nn.functional.cross_entropy(model(ember.from_numpy(x)), ember.from_numpy(y)).backward()
        norm = float(model.clip_grad_norm_(0.05, norm_type))
        opt = ember.optim.SGD(model.parameters(), lr=1.0)
        opt.step()  # the clipped gradients, applied: compare the weights they give
        torch.optim.SGD(reference.parameters(), lr=1.0).step()
        gaps += [abs(norm - expected_norm), gap(model.state_dict(), {k: v.detach().numpy()
                                                                    for k, v in reference.state_dict().items()})]
    return max(gaps) < TOL or gaps


@checks.run("parameter names, shard sizes and full state dict keys == torch FSDP's (ModuleWrapPolicy, size based)")
def _():
    pairs = [(LINEAR, torch_wrap.ModuleWrapPolicy({torch.nn.Linear})),
             (BY_SIZE, functools.partial(torch_wrap.size_based_auto_wrap_policy, min_num_params=40))]
    for ours_policy, torch_policy in pairs:
        ours = FSDP(ember_twin(torch_model()), auto_wrap_policy=ours_policy)
        theirs = torch_fsdp(torch_policy)
        shapes = [(n, tuple(p.shape)) for n, p in ours.named_parameters()]
        torch_shapes = [(n, tuple(p.shape)) for n, p in theirs.named_parameters()]
        if shapes != torch_shapes:
            return shapes, torch_shapes
        if not all(np.array_equal(a.detach().numpy(), b.detach().numpy())
                   for a, b in zip(ours.parameters(), theirs.parameters())):
            return "shards differ from torch's (padding or order)"
        with TorchFSDP.state_dict_type(theirs, tdist.fsdp.StateDictType.FULL_STATE_DICT):
            torch_keys = list(theirs.state_dict())
        if list(ours.state_dict()) != torch_keys:
            return list(ours.state_dict()), torch_keys
        if str(ours).replace("ember.", "") != str(theirs).replace("torch.", ""):
            return str(ours), str(theirs)
    return True


@checks.run("FULL_SHARD == torch FSDP (gloo) trained the same way, Adam")
def _():
    ours, _ = train_ember_fsdp("adam", auto_wrap_policy=LINEAR)
    theirs = torch_fsdp(torch_wrap.ModuleWrapPolicy({torch.nn.Linear}))
    opt = torch.optim.Adam(theirs.parameters(), lr=0.01)
    for step in range(STEPS):
        x, y = mine(step)
        opt.zero_grad()
        torch.nn.functional.cross_entropy(theirs(torch.from_numpy(x)), torch.from_numpy(y)).backward()
        opt.step()
    with TorchFSDP.state_dict_type(theirs, tdist.fsdp.StateDictType.FULL_STATE_DICT):
        expected = {k: v.detach().numpy() for k, v in theirs.state_dict().items()}
    difference = gap(ours.state_dict(), expected)
    return difference < TOL or difference


@checks.run("each rank holds 1/world of the parameters and of Adam's state; FULL_SHARD frees after use")
def _():
    model, opt = train_ember_fsdp("adam", auto_wrap_policy=LINEAR)
    full = sum(v.numel() for v in torch_model().parameters())
    units = [18, 49, 72, 30]  # the root (the LayerNorm), Linear(6, 7), Linear(7, 9), Linear(9, 3)
    shard = sum(-(-n // SIZE) for n in units)
    params = sum(p.numel() for p in model.parameters())
    state = sum(v.numel() for s in opt.state.values() for v in s.values() if v.ndim == 1)
    if sum(units) != full:
        return f"units {units} do not add up to the model's {full} parameters"
    if params != shard or state != 2 * shard:
        return f"rank holds {params} parameters and {state} Adam state elements, expected {shard} and {2 * shard}"
    # Peak full parameters during one step: FULL_SHARD keeps the root and at most two units
    reset_peak()
    x, y = mine(0)
    ember.nn.functional.cross_entropy(model(ember.from_numpy(x)), ember.from_numpy(y)).backward()
    peak = UNSHARDED["peak"] // 8
    padded = [-(-n // SIZE) * SIZE for n in units]
    bound = padded[0] + sum(sorted(padded[1:])[-2:])
    if UNSHARDED["now"] != 0 or not peak <= bound < sum(padded):
        return f"peak {peak} elements unsharded (bound {bound}, all {sum(padded)}), {UNSHARDED['now']} left"
    return True


@checks.run("load_state_dict of torch's full state dict, then state_dict, gives it back; eval forward == torch's")
def _():
    reference = torch_model()
    with torch.no_grad():
        for p in reference.parameters():
            p.mul_(1.5)
    model = FSDP(build(ember.nn), auto_wrap_policy=LINEAR)
    model.load_state_dict({k: ember.from_numpy(v.numpy().copy()) for k, v in reference.state_dict().items()})
    difference = gap(model.state_dict(), {k: v.numpy() for k, v in reference.state_dict().items()})
    model.eval()
    reference.eval()
    with ember.no_grad():
        out = model(ember.from_numpy(X[0])).numpy()
    expected = reference(torch.from_numpy(X[0])).detach().numpy()
    out_gap = float(np.abs(out - expected).max())
    return (difference == 0 and out_gap < TOL and UNSHARDED["now"] == 0) or (difference, out_gap)


@checks.run("summon_full_params shows the full parameters and writes changes back to the shards")
def _():
    model = FSDP(ember_twin(torch_model()), auto_wrap_policy=LINEAR)
    with FSDP.summon_full_params(model):
        names = [n for n, _ in model.named_parameters()]
        with ember.no_grad():
            model.module[0].weight.fill_(2.0)
    state = model.state_dict()
    expected_names = [n for n in names if n.endswith("weight") or n.endswith("bias")]
    return (bool(state["0.weight"].eq(2.0).all()) and len(expected_names) == 8) or names


@checks.run("state_dict_type: FULL_STATE_DICT with rank0_only; other types are ember's clear error")
def _():
    model = FSDP(ember_twin(torch_model()), auto_wrap_policy=LINEAR)
    from ember.distributed.fsdp import FullStateDictConfig
    with FSDP.state_dict_type(model, StateDictType.FULL_STATE_DICT, FullStateDictConfig(rank0_only=True)):
        state = model.state_dict()
    if (len(state) > 0) != (RANK == 0) or len(model.state_dict()) == 0:
        return f"rank0_only gave {len(state)} keys on rank {RANK}"
    try:
        with FSDP.state_dict_type(model, StateDictType.SHARDED_STATE_DICT):
            pass
    except NotImplementedError as exc:
        return "ShardedTensor/DTensor" in str(exc) or str(exc)
    return "no error"


dist.barrier()
checks.write(sys.argv[1], RANK)
tdist.destroy_process_group()
dist.destroy_process_group()
