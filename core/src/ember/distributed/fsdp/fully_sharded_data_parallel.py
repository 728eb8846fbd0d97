"""``FullyShardedDataParallel``: data parallelism where each rank keeps 1/world of the parameters.

PyTorch counterpart: torch/distributed/fsdp/fully_sharded_data_parallel.py with
_init_utils.py, _runtime_utils.py and _state_dict_utils.py (FSDP1, ``use_orig_params=False``) (v2.13).

# NOTE [ The FSDP schedule ]
# A model is cut into units: the root, plus one per submodule the auto-wrap policy picks
# (wrap.py). Each unit holds one flat parameter, sharded over the ranks (NOTE [ One flat
# parameter per unit ] in flat_param.py). Per training step, each unit:
#   forward:  all_gather the shards into the full flat parameter; run the module with
#             views of it as its parameters; FULL_SHARD then frees the full buffer
#             (except the root's, which backward needs first), SHARD_GRAD_OP keeps it;
#   backward: when the gradient of the unit's output arrives (a hook on the output),
#             all_gather again if it was freed; when the full flat gradient has
#             accumulated, reduce_scatter it (summed, divided by world) so each rank
#             gets the gradient of its own shard, then free the full buffer.
# The optimizer then steps each rank's shards only: its state (momentum, Adam's
# moments) is sharded too. With each rank's loss the mean over its own samples, the
# averaged gradient is the gradient of the mean over all ranks' samples, so N FSDP steps
# equal N single-process steps on the concatenated batch. NO_SHARD keeps the whole flat
# parameter on every rank and all_reduces its gradient: DDP's schedule.
#
# torch overlaps communication with compute: ``backward_prefetch`` issues the next
# unit's all_gather before the current unit's gradient computation (BACKWARD_PRE) or
# after it (BACKWARD_POST), ``forward_prefetch`` does so in forward, and
# ``limit_all_gathers`` bounds how many gathered units may be alive at once. ember
# issues each collective synchronously when it is needed: the same values, no overlap;
# it accepts those arguments and documents that they change nothing.
#
# ember leaves out: ``use_orig_params=True`` (the optimizer would see the original
# parameters as views into the shards), CPU offload, mixed precision, the hybrid
# strategies, ignored modules, ``param_init_fn`` and meta-device init, SHARDED_STATE_DICT
# (it returns ShardedTensor/DTensor values) and LOCAL_STATE_DICT, ``no_sync``, and the
# optimizer state-dict helpers (``full_optim_state_dict``...).
"""

import contextlib
import warnings

from ember.distributed.fsdp.api import BackwardPrefetch, FullStateDictConfig, ShardingStrategy, StateDictType
from ember.distributed.fsdp.flat_param import FlatParamHandle
from ember.distributed.fsdp.wrap import _recursive_wrap
from ember.nn.modules.module import Module
from ember.nn.parallel.distributed import _unique

_WRAPPED = "_fsdp_wrapped_module"
_PREFIX = _WRAPPED + "."
_FLAT = "_flat_param"
_SEE_NOTE = "see the FSDP schedule note in ember/distributed/fsdp/fully_sharded_data_parallel.py"


class FullyShardedDataParallel(Module):
    """Wrap ``module`` so that each rank of ``process_group`` keeps 1/world of its parameters."""

    def __init__(self, module, process_group=None, sharding_strategy=None, cpu_offload=None, auto_wrap_policy=None,
                 backward_prefetch=BackwardPrefetch.BACKWARD_PRE, mixed_precision=None, ignored_modules=None,
                 param_init_fn=None, device_id=None, sync_module_states=False, forward_prefetch=False,
                 limit_all_gathers=True, use_orig_params=False, ignored_states=None, device_mesh=None):
        super().__init__()
        from ember import distributed as dist

        if not dist.is_initialized():
            raise RuntimeError("Default process group has not been initialized, please make sure to call "
                               "init_process_group.")
        _refuse_left_out(sharding_strategy, cpu_offload, mixed_precision, ignored_modules, param_init_fn,
                         use_orig_params, ignored_states, device_mesh)
        self.process_group = process_group if process_group is not None else dist.group.WORLD
        self.sharding_strategy = _strategy(sharding_strategy, dist.get_world_size(self.process_group))
        self.backward_prefetch = backward_prefetch
        self.forward_prefetch = forward_prefetch
        self.limit_all_gathers = limit_all_gathers
        self.use_orig_params = False
        self._is_root = True
        self._state_dict_type = StateDictType.FULL_STATE_DICT
        self._state_dict_config = FullStateDictConfig()
        if auto_wrap_policy is not None:
            def unit(child):
                return FullyShardedDataParallel(
                    child, process_group=process_group, sharding_strategy=self.sharding_strategy,
                    backward_prefetch=backward_prefetch, device_id=device_id, sync_module_states=sync_module_states,
                    forward_prefetch=forward_prefetch, limit_all_gathers=limit_all_gathers)
            _recursive_wrap(module, auto_wrap_policy, unit, only_wrap_children=True)
        if sync_module_states:
            from ember.nn.parallel.distributed import _broadcast_coalesced

            _broadcast_coalesced([*_own_params(module), *module.buffers()], self.process_group)
        for inner in module.modules():
            if isinstance(inner, FullyShardedDataParallel):
                inner._is_root = False
        self._fsdp_wrapped_module = module
        self._slots = _own_slots(module)  # (submodule, name, index into the unique parameters)
        params = _unique(p for _, _, p in self._slots)
        index = {id(p): i for i, p in enumerate(params)}
        self._slots = [(owner, name, index[id(p)]) for owner, name, p in self._slots]
        self._handle = None
        if params:
            self._handle = FlatParamHandle(params, self.process_group,
                                           sharded=self.sharding_strategy is not ShardingStrategy.NO_SHARD)
            for owner, name, _ in self._slots:
                owner._parameters[name] = None  # NOTE [ One flat parameter per unit ]
            module.register_parameter(_FLAT, self._handle.flat_param)
            self._uninstall()

    @property
    def module(self):
        """The wrapped module (torch's ``FullyShardedDataParallel.module``)."""
        return self._modules[_WRAPPED]

    def __getattr__(self, name):
        """What FSDP itself lacks is the wrapped module's (``fsdp.layers`` reads the model's)."""
        try:
            return super().__getattr__(name)
        except AttributeError:
            wrapped = self.__dict__.get("_modules", {}).get(_WRAPPED)
            if wrapped is None:
                raise
            return getattr(wrapped, name)

    def __getitem__(self, key):
        return self._modules[_WRAPPED].__getitem__(key)

    # --- forward and the hooks of backward (NOTE [ The FSDP schedule ]) ---------------
    def forward(self, *args, **kwargs):
        from ember.autograd import is_grad_enabled
        from ember.nn.parallel.distributed import _tensors_in

        handle = self._handle
        if handle is None:
            return self.module(*args, **kwargs)
        handle.unshard()
        self._install(handle.new_views())
        try:
            output = self.module(*args, **kwargs)
        finally:
            self._uninstall()
        if not (is_grad_enabled() and handle.leaf.requires_grad):
            handle.free()  # no backward will come: give the full buffer back now
            handle.forget_views()
            return output
        full_shard = self.sharding_strategy is ShardingStrategy.FULL_SHARD
        if full_shard and not self._is_root:  # the root's are needed first in backward
            handle.free()
        for tensor in _tensors_in(output):
            if tensor.requires_grad:
                tensor.register_hook(self._pre_backward)
        return output

    def _pre_backward(self, grad):
        self._handle.unshard()  # a no-op unless FULL_SHARD freed it after forward

    def _install(self, views):
        for owner, name, i in self._slots:
            owner.__dict__[name] = views[i]

    def _uninstall(self):
        """Outside forward each parameter name holds a freed stand-in: its shape, no memory
        (torch's attribute is a view of freed storage), so ``module.weight.shape`` and the
        module's repr still read right."""
        for owner, name, i in self._slots:
            owner.__dict__[name] = self._handle.stand_in(i)

    # --- gradient clipping ---------------------------------------------------------------
    def clip_grad_norm_(self, max_norm, norm_type=2.0):
        """Clip the gradients of every unit by their total norm over all ranks; returns that norm.

        ``nn.utils.clip_grad_norm_`` on one rank would see its shards only: each rank's
        part of sum(|g|^p) (max for inf) is all-reduced first, then every shard is
        scaled by the same ``max_norm / (total + 1e-6)``, capped at 1, as torch's.
        """
        import ember
        from ember import distributed as dist

        if not self._is_root:
            raise RuntimeError("`clip_grad_norm_()` should only be called on the root FSDP instance")
        p = float(norm_type)
        handles = [m._handle for m in self.modules() if isinstance(m, FullyShardedDataParallel) and m._handle]
        grads = [h.flat_param.grad for h in handles if h.flat_param.grad is not None]
        sharded = [h.flat_param.grad for h in handles if h.flat_param.grad is not None and h.sharded]
        whole = [g for g in grads if not any(g is s for s in sharded)]
        dtype = grads[0].dtype if grads else ember.float32

        def part(gs):  # this rank's sum of |g|^p (max |g| for inf), over the given gradients
            if not gs:
                return ember.zeros((), dtype=dtype)
            if p == float("inf"):
                return ember.stack([g.abs().max() for g in gs]).max()
            return ember.stack([g.abs().pow(p).sum() for g in gs]).sum()

        local = part(sharded)
        dist.all_reduce(local, op=dist.ReduceOp.MAX if p == float("inf") else dist.ReduceOp.SUM,
                        group=self.process_group)
        if p == float("inf"):
            total = ember.maximum(local, part(whole))
        else:
            total = (local + part(whole)) ** (1.0 / p)
        coefficient = (max_norm / (total + 1e-6)).clamp(max=1.0)
        with ember.no_grad():
            for g in grads:
                g.mul_(coefficient.to(g.dtype))
        return total

    # --- the full parameters outside forward ----------------------------------------------
    @staticmethod
    @contextlib.contextmanager
    def summon_full_params(module, recurse=True, writeback=True, rank0_only=False, offload_to_cpu=False,
                           with_grads=False):
        """Inside, every unit's module has its full parameters back (as Parameters, under their
        own names); with ``writeback``, changes made to them are copied into the shards on exit."""
        from ember.autograd import no_grad
        from ember.nn.parameter import Parameter

        if with_grads:
            raise NotImplementedError("summon_full_params: ember leaves out with_grads=True")
        units = [m for m in module.modules() if isinstance(m, FullyShardedDataParallel) and m._handle is not None]
        if not recurse:
            units = units[:1]
        with no_grad():
            for unit in units:
                unit._handle.unshard()
                views = unit._handle.new_views()
                for owner, name, i in unit._slots:
                    owner.__dict__.pop(name, None)
                    owner._parameters[name] = Parameter(views[i], requires_grad=views[i].requires_grad)
        try:
            yield
        finally:
            for unit in units:
                for owner, name, _ in unit._slots:
                    owner._parameters[name] = None
                unit._uninstall()
                if writeback:
                    unit._handle.write_back()
                unit._handle.free()
                unit._handle.forget_views()

    # --- state dicts ------------------------------------------------------------------------
    @staticmethod
    @contextlib.contextmanager
    def state_dict_type(module, state_dict_type, state_dict_config=None, optim_state_dict_config=None):
        """Set the kind of state dict every unit under ``module`` gives, for the ``with`` block."""
        units = [m for m in module.modules() if isinstance(m, FullyShardedDataParallel)]
        previous = [(u._state_dict_type, u._state_dict_config) for u in units]
        FullyShardedDataParallel.set_state_dict_type(module, state_dict_type, state_dict_config)
        try:
            yield
        finally:
            for unit, (kind, config) in zip(units, previous):
                unit._state_dict_type, unit._state_dict_config = kind, config

    @staticmethod
    def set_state_dict_type(module, state_dict_type, state_dict_config=None, optim_state_dict_config=None):
        if state_dict_type is not StateDictType.FULL_STATE_DICT:
            raise NotImplementedError(
                f"ember's FullyShardedDataParallel gives FULL_STATE_DICT only, not {state_dict_type}: torch's "
                "SHARDED_STATE_DICT values are ShardedTensor/DTensor and its LOCAL_STATE_DICT ones ShardedTensor, "
                "which ember does not have")
        for unit in module.modules():
            if isinstance(unit, FullyShardedDataParallel):
                unit._state_dict_type = state_dict_type
                unit._state_dict_config = state_dict_config or FullStateDictConfig()

    def state_dict(self, *, destination=None, prefix="", keep_vars=False):
        """The full state dict: every parameter whole, under the wrapped module's own names."""
        if not self._is_root or destination is not None:  # inside the root's call below
            return super().state_dict(destination=destination, prefix=prefix, keep_vars=keep_vars)
        with FullyShardedDataParallel.summon_full_params(self, writeback=False):
            full = super().state_dict(prefix=prefix)
        from collections import OrderedDict

        from ember import distributed as dist

        out = OrderedDict((_clean(k), v.clone()) for k, v in full.items() if not k.endswith(_FLAT))
        if self._state_dict_config.rank0_only and dist.get_rank(self.process_group) != 0:
            return OrderedDict()
        return out

    def load_state_dict(self, state_dict, strict=True, assign=False):
        """Load a full state dict (keys as ``state_dict`` gives them) into the shards."""
        from ember.nn.modules.module import _IncompatibleKeys

        with FullyShardedDataParallel.summon_full_params(self, writeback=True):
            own = {k: v for k, v in Module.state_dict(self).items()}
            renamed = {k: v for k, v in own.items() if k.endswith(_FLAT)}
            names = {_clean(k): k for k in own if not k.endswith(_FLAT)}
            renamed.update((names.get(k, k), v) for k, v in state_dict.items())
            result = super().load_state_dict(renamed, strict=strict)
        return _IncompatibleKeys([_clean(k) for k in result.missing_keys],
                                 [_clean(k) for k in result.unexpected_keys])

    def extra_repr(self):
        return ""


FSDP = FullyShardedDataParallel


def _clean(key):
    """A key without FSDP's wrapper names: torch's full state dict keys."""
    return key.replace(_PREFIX, "")


def _own_slots(module):
    """(owner, name, parameter) for every parameter under ``module`` that no nested unit holds."""
    slots, stack = [], [module]
    while stack:
        owner = stack.pop()
        slots.extend((owner, name, p) for name, p in owner._parameters.items() if p is not None)
        stack.extend(reversed([c for c in owner._modules.values()
                               if c is not None and not isinstance(c, FullyShardedDataParallel)]))
    return slots


def _own_params(module):
    return _unique(p for _, _, p in _own_slots(module))


def _strategy(strategy, world_size):
    strategy = ShardingStrategy.FULL_SHARD if strategy is None else strategy
    if world_size == 1 and strategy is not ShardingStrategy.NO_SHARD:
        warnings.warn(f"FSDP is switching to use `NO_SHARD` instead of {strategy} since the world size is 1.",
                      stacklevel=3)
        return ShardingStrategy.NO_SHARD
    return strategy


def _refuse_left_out(strategy, cpu_offload, mixed_precision, ignored_modules, param_init_fn, use_orig_params,
                     ignored_states, device_mesh):
    """One clear error for each option ember does not implement (NOTE [ The FSDP schedule ])."""
    left_out = {
        "sharding_strategy=" + str(strategy): strategy in (ShardingStrategy.HYBRID_SHARD,
                                                          ShardingStrategy._HYBRID_SHARD_ZERO2),
        "cpu_offload": cpu_offload is not None and cpu_offload.offload_params,
        "mixed_precision": mixed_precision is not None,
        "ignored_modules": bool(ignored_modules),
        "ignored_states": bool(ignored_states),
        "param_init_fn": param_init_fn is not None,
        "use_orig_params=True": bool(use_orig_params),
        "device_mesh": device_mesh is not None,
    }
    for what, asked in left_out.items():
        if asked:
            raise NotImplementedError(f"FullyShardedDataParallel: ember leaves out {what} ({_SEE_NOTE})")
