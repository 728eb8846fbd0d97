"""The dispatcher's modes: ``Op.__call__`` is ``dispatch`` while no mode is on and
``run_in_modes`` while autocast or a jit.trace is, and the modes nest in PyTorch's key
order (autocast above the tracer).

PyTorch counterpart: test/test_dispatch.py and test/test_autocast.py (v2.13).
"""

import pytest
import torch

import ember
from ember import dispatcher
from ember.dispatch_modes import modes, run_in_modes


def _plain():
    return dispatcher.Op.__call__ is dispatcher.dispatch and not modes.active


def test_no_mode_costs_an_op_nothing():
    assert _plain()
    assert modes.autocast is None and modes.trace is None


def test_nested_autocast_regions_switch_back_only_at_the_outermost_exit():
    with ember.autocast("cpu", dtype=ember.bfloat16):
        assert dispatcher.Op.__call__ is run_in_modes and modes.active
        with ember.autocast("cpu", enabled=False):
            assert _plain()  # an inner region that turns autocast off
            assert (ember.ones(2, 2) @ ember.ones(2, 2)).dtype == ember.float32
        assert dispatcher.Op.__call__ is run_in_modes
        assert (ember.ones(2, 2) @ ember.ones(2, 2)).dtype == ember.bfloat16
    assert _plain()


def test_a_failed_trace_switches_the_modes_off():
    def fails(x):
        x = x * 2
        raise ValueError("inside the trace")

    with pytest.raises(ValueError, match="inside the trace"):
        ember.jit.trace(fails, ember.ones(2))
    assert _plain()


def test_a_trace_under_autocast_records_the_cast_inputs():
    def product(a, b):
        return a @ b

    with ember.autocast("cpu", dtype=ember.bfloat16):
        traced = ember.jit.trace(product, (ember.ones(2, 3), ember.ones(3, 2)))
        assert dispatcher.Op.__call__ is run_in_modes  # the trace ended, autocast is still on
    assert _plain()
    targets = [node.target.name for node in traced.graph.nodes if node.op == "call_function"]
    assert targets[-1] in ("mm", "matmul") and len(targets) == 3  # two casts, then the product
    with torch.autocast("cpu", dtype=torch.bfloat16):
        expected = torch.ones(2, 3) @ torch.ones(3, 2)
    result = traced(ember.ones(2, 3), ember.ones(3, 2))
    assert result.dtype == ember.bfloat16 and expected.dtype == torch.bfloat16
    assert result.float().tolist() == expected.float().tolist()
