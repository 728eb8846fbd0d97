"""Forward-mode AD over torch's op_db: each sample's floating tensors become dual tensors
with the same random tangents in torch and in ember, the entry runs in a dual level, and
the outputs' tangents are compared (op_db_runner.py converts and compares).

PyTorch counterpart: test/test_ops.py's ``test_forward_mode_AD`` (``TestFwdGradients``),
which checks forward AD against finite differences; here torch's tangents are the oracle (v2.13).
"""

import torch
from op_db_runner import Missing, compare, ember_function, flat_tensors, is_random, to_ember, to_torch

import ember

NO_RULE = "Trying to use forward AD with "


class NoRule(Exception):
    """ember has no forward-derivative rule for an op the entry calls."""


def supports_forward_ad(op):
    return bool(getattr(op, "supports_forward_ad", False)) and torch.float64 in op.supported_dtypes("cpu")


def run_forward_entry(op):
    """Compare the tangents of every float64 sample; the number compared. Raises NoRule
    (ember lacks a rule) or AssertionError (a difference, or an error torch does not raise)."""
    function = ember_function(op)
    checked = 0
    for i, sample in enumerate(op.sample_inputs("cpu", torch.float64, requires_grad=False)):
        checked += run_forward_sample(op, function, sample, f"float64 sample {i} ({sample.name or 'unnamed'})")
    return checked


def _tangents(value, generator, out):
    if isinstance(value, torch.Tensor):
        if value.is_floating_point():
            out.append(torch.randn(value.shape, dtype=value.dtype, generator=generator))
    elif isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
        for v in value:
            _tangents(v, generator, out)
    elif isinstance(value, dict):
        for v in value.values():
            _tangents(v, generator, out)
    return out


def _dual(value, lib, tangents):
    """``value`` with each floating tensor made dual with the next tangent, in the order
    ``_tangents`` met them."""
    if isinstance(value, lib.Tensor):
        if value.is_floating_point():
            return lib.autograd.forward_ad.make_dual(value, next(tangents))
        return value
    if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
        return type(value)(_dual(v, lib, tangents) for v in value)
    if isinstance(value, dict):
        return {k: _dual(v, lib, tangents) for k, v in value.items()}
    return value


def _output_tangents(result, lib):
    unpack = lib.autograd.forward_ad.unpack_dual
    return [unpack(t).tangent for t in flat_tensors(result) if t.is_floating_point()]


def run_forward_sample(op, function, sample, label):
    arguments = [sample.input, list(sample.args), dict(sample.kwargs)]
    tangents = _tangents(arguments, torch.Generator().manual_seed(0), [])
    if not tangents:
        return 0
    try:
        ember_arguments = to_ember(arguments)
    except Missing:
        return 0
    try:
        if is_random(op, sample):
            return 0
        with torch.autograd.forward_ad.dual_level():
            inputs = _dual(arguments, torch, iter(tangents))
            expected = _output_tangents(op.op(inputs[0], *inputs[1], **inputs[2]), torch)
    except Exception:
        return 0  # torch refuses the sample, or has no forward rule for it
    call = function if function is not None else op.op
    try:
        with ember.autograd.forward_ad.dual_level():
            inputs = _dual(ember_arguments, ember, iter([to_ember(t) for t in tangents]))
            actual = _output_tangents(call(inputs[0], *inputs[1], **inputs[2]), ember)
    except NotImplementedError as error:
        if str(error).startswith(NO_RULE):
            raise NoRule(str(error).splitlines()[0]) from None
        raise AssertionError(f"{label}: ember raises NotImplementedError: {error}") from error
    except Exception as error:
        raise AssertionError(f"{label}: ember raises {type(error).__name__}: {error}") from error
    if len(actual) != len(expected):
        raise AssertionError(f"{label}: {len(actual)} floating outputs, torch {len(expected)}")
    for i, (a, e) in enumerate(zip(actual, expected)):
        if e is None and a is None:
            continue
        if e is None or a is None:
            raise AssertionError(f"{label}: output {i} has a tangent in {'ember' if e is None else 'torch'} only")
        compare(to_torch(a), e, op, torch.float64, f"{label}, tangent of output {i}")
    return 1
