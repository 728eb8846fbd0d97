"""Run one entry of torch's module database (``module_db``) through ember and through torch
with the same constructor arguments, state and inputs, and say how they differ.

PyTorch counterpart: torch/testing/_internal/common_modules.py (``module_db``,
``ModuleInfo.module_inputs_func``) and test/test_modules.py (``TestModule``), whose inputs
this reuses; the comparison is ember's own: torch is the oracle.

An entry ``nn.X`` is checked against ``ember.nn.X`` for float32 and float64 (those the
entry supports on the CPU), in training mode and in eval mode (torch's own tests run
eval mode only where the entry says the modes differ; ember's module could differ where
torch's does not, so both are run here). For each module input both modules are built
from the same constructor arguments, ember's takes torch's parameters and buffers by
name (``load_state_dict``), and both run the forward input: the outputs are compared by
shape, dtype and value (the entry's tolerances, else ``torch.testing.assert_close``'s
defaults), the buffers after a training-mode forward (running statistics), and for
float64 the gradients of the inputs and of the parameters for one fixed cotangent. A
random module (two torch runs from different seeds differ) is compared by shape and
dtype only.

The conversions and the comparison are op_db_runner's; this file adds what modules need.
"""

import copy
import types

import torch
from op_db_runner import Missing, compare, differs_by_seed, flat_tensors, seed_cpu, to_ember, to_torch, torch_leaves
from torch.testing._internal.common_modules import module_db

import ember

DTYPES = (torch.float32, torch.float64)


def entry_id(info):
    """``nn.X``: how torch (and the suite) names an entry."""
    return info.name


def entries():
    """The module_db entries by id."""
    return {entry_id(info): info for info in module_db}


def ember_class(info):
    """ember's counterpart of the entry's module class."""
    name = info.module_cls.__name__
    try:
        return getattr(ember.nn, name)
    except (AttributeError, ImportError) as error:
        raise Missing(f"ember.nn has no {name}") from error


def is_implemented(info):
    """Whether ember.nn has a class of the entry's name, without building it."""
    try:
        ember_class(info)
    except Missing:
        return False
    return True


# --- converting constructor arguments -------------------------------------------------


class TorchSpecific(Exception):
    """A constructor argument only torch understands."""


def constructor_to_ember(value):
    """Constructor arguments made ember's: op_db_runner's ``to_ember``, and a torch
    functional (an activation given as a function) named back to ember's. A torch module
    given as an argument (TransformerEncoder's layer) is a thing ember cannot take."""
    if isinstance(value, torch.nn.Module):
        raise TorchSpecific(f"a torch module ({type(value).__name__}) as a constructor argument")
    if isinstance(value, types.FunctionType | types.BuiltinFunctionType) and _is_torch_function(value):
        try:
            return getattr(ember.nn.functional, value.__name__)
        except AttributeError as error:
            raise TorchSpecific(f"torch's {value.__name__} as a constructor argument") from error
    if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
        return type(value)(constructor_to_ember(v) for v in value)
    if isinstance(value, dict):
        return {k: constructor_to_ember(v) for k, v in value.items()}
    return to_ember(value)


def _is_torch_function(value):
    return (getattr(value, "__module__", "") or "").startswith("torch")


# --- building both modules --------------------------------------------------------------


def build_torch(info, module_input, dtype, training):
    """torch's module as test_modules.py builds it: constructed, cast to ``dtype``, and
    put in training or eval mode."""
    args, kwargs = module_input.constructor_input.args, module_input.constructor_input.kwargs
    seed_cpu(0)
    module = info.module_cls(*args, **kwargs)
    module.to(dtype)
    module.train(training)
    if getattr(module, "has_uninitialized_params", None) and module.has_uninitialized_params():
        # a lazy module: shapes from the forward input first, so that its state can be copied
        with torch.no_grad():
            module.initialize_parameters(*module_input.forward_input.args, **module_input.forward_input.kwargs)
    return module


def build_ember(info, module_input, torch_module, dtype, label):
    """ember's module from the same arguments, cast alike, holding torch's state."""
    cls = ember_class(info)
    args, kwargs = module_input.constructor_input.args, module_input.constructor_input.kwargs
    try:
        args, kwargs = constructor_to_ember(list(args)), constructor_to_ember(dict(kwargs))
    except TorchSpecific as error:
        raise AssertionError(f"{label}: torch-specific constructor argument: {error}") from error
    try:
        module = cls(*args, **kwargs)
        module.to(to_ember(dtype))
    except Exception as error:
        raise AssertionError(f"{label}: ember's constructor raises {type(error).__name__}: {error}") from error
    state = {name: to_ember(value.detach()) for name, value in torch_module.state_dict().items()}
    try:
        module.load_state_dict(state)
    except Exception as error:
        raise AssertionError(f"{label}: ember's load_state_dict of torch's state raises "
                             f"{type(error).__name__}: {error}") from error
    module.train(torch_module.training)
    return module


def forward_args(module_input):
    return [list(module_input.forward_input.args), dict(module_input.forward_input.kwargs)]


def is_random(module_input, module):
    """Whether two torch forwards of the input, from different seeds, differ."""
    args, kwargs = forward_args(module_input)

    def forward():
        with torch.no_grad():
            return copy.deepcopy(module)(*args, **kwargs)

    return differs_by_seed(forward)


# --- running ---------------------------------------------------------------------------


def run_entry(info):
    """Check every module input of the entry; return the number of comparisons made.
    Raises AssertionError (a difference, or an error ember raised where torch did not)."""
    ember_class(info)
    checked = 0
    for dtype in DTYPES:
        if dtype not in info.supported_dtypes("cpu"):
            continue
        grad = dtype == torch.float64
        for training in (True, False):
            inputs = info.module_inputs_func(info, device="cpu", dtype=dtype, requires_grad=grad, training=training)
            for i, module_input in enumerate(inputs):
                if module_input.forward_input is None:
                    continue
                mode = "train" if training else "eval"
                label = f"{dtype} {mode} input {i} ({module_input.desc or 'unnamed'})"
                checked += run_input(info, module_input, dtype, training, grad, label)
    return checked


def run_input(info, module_input, dtype, training, grad, label):
    try:
        torch_module = build_torch(info, module_input, dtype, training)
        random = is_random(module_input, torch_module)
    except Exception:
        return 0  # torch refuses the input: nothing to compare
    ember_module = build_ember(info, module_input, torch_module, dtype, label)
    args, kwargs = forward_args(module_input)
    seed_cpu(0)
    expected = torch_module(*args, **kwargs)
    leaves = []
    inputs = to_ember([args, kwargs], leaves)
    try:
        actual = ember_module(*inputs[0], **inputs[1])
    except Exception as error:
        raise AssertionError(f"{label}: ember's forward raises {type(error).__name__}: {error}") from error
    compare(to_torch(actual), expected, info, dtype, f"{label}, output", values=not random)
    checked = 1
    if training and not random:
        checked += compare_buffers(info, torch_module, ember_module, dtype, label)
    if grad and not random:
        checked += run_gradient(info, torch_module, ember_module, [args, kwargs], expected, actual, leaves,
                                dtype, label)
    return checked


def compare_buffers(info, torch_module, ember_module, dtype, label):
    """The buffers after the forward (a training forward updates running statistics)."""
    ours = dict(ember_module.named_buffers())
    for name, buffer in torch_module.named_buffers():
        if name not in ours:
            raise AssertionError(f"{label}: ember's module has no buffer {name}")
        compare(to_torch(ours[name]), buffer, info, dtype, f"{label}, buffer {name} after forward")
    return 1


def run_gradient(info, torch_module, ember_module, torch_inputs, expected, actual, leaves, dtype, label):
    """The gradients of every input that requires grad and of every parameter, for one
    fixed cotangent of each floating output."""
    input_leaves = torch_leaves(torch_inputs, [])
    if len(input_leaves) != len(leaves):
        return 0
    names = [name for name, p in torch_module.named_parameters() if p.requires_grad]
    torch_params = dict(torch_module.named_parameters())
    ember_params = dict(ember_module.named_parameters())
    missing = [name for name in names if name not in ember_params]
    if missing:
        raise AssertionError(f"{label}: ember's module has no parameter {missing[0]}")
    outputs = [t for t in flat_tensors(expected) if t.requires_grad and t.is_floating_point()]
    if not outputs:
        return 0
    generator = torch.Generator().manual_seed(0)
    cotangents = [torch.randn(t.shape, dtype=t.dtype, generator=generator) for t in outputs]
    expected_grads = torch.autograd.grad(outputs, input_leaves + [torch_params[n] for n in names], cotangents,
                                         allow_unused=True)
    ember_outputs = [t for t, e in zip(flat_tensors(actual), flat_tensors(expected))
                     if e.requires_grad and e.is_floating_point()]
    if len(ember_outputs) != len(outputs) or any(not t.requires_grad for t in ember_outputs):
        raise AssertionError(f"{label}: ember's output does not require grad where torch's does")
    try:
        grads = ember.autograd.grad(ember_outputs, leaves + [ember_params[n] for n in names],
                                    [to_ember(c) for c in cotangents], allow_unused=True)
    except Exception as error:
        raise AssertionError(f"{label}: ember's backward raises {type(error).__name__}: {error}") from error
    what = [f"input {i}" for i in range(len(leaves))] + [f"parameter {n}" for n in names]
    for g, e, name in zip(grads, expected_grads, what):
        if e is None:
            continue
        if g is None:
            g = ember.zeros(tuple(e.shape), dtype=to_ember(e.dtype))
        compare(to_torch(g), e, info, dtype, f"{label}, gradient of {name}")
    return 1
