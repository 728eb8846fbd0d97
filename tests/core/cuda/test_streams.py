"""Tests for ember/cuda/streams.py: without CUDA, the answers torch's CPU build gives
(its wheel is the oracle here); with a CUDA device (through ember-cupy), streams and
events that really order, wait and time kernels. Each group skips where it cannot run."""

import pytest
import torch

import ember

no_cuda = pytest.mark.skipif(ember.cuda.is_available(), reason="checks the answers of a machine without CUDA")
needs_cuda = pytest.mark.skipif(not ember.cuda.is_available(), reason="needs a CUDA device (ember-cupy)")
torch_has_no_cuda = not torch.cuda.is_available()


@no_cuda
@pytest.mark.parametrize("name", ["Event", "Stream"])
def test_creating_a_stream_or_event_without_cuda_is_torchs_runtime_error(name):
    assert torch_has_no_cuda
    with pytest.raises(RuntimeError) as theirs:
        getattr(torch.cuda, name)()
    with pytest.raises(RuntimeError, match=f"ember.cuda.{name} requires CUDA support") as ours:
        getattr(ember.cuda, name)()
    assert type(ours.value) is type(theirs.value)
    assert "cuda" in str(ours.value).lower()  # and it says why there is none


@no_cuda
@pytest.mark.parametrize("name", ["current_stream", "default_stream"])
def test_current_and_default_stream_without_cuda_raise(name):
    with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
        getattr(torch.cuda, name)()
    # ember: a RuntimeError saying why, like ember.cuda.synchronize (see the module docstring)
    with pytest.raises(RuntimeError, match=f"ember.cuda.{name} requires CUDA support"):
        getattr(ember.cuda, name)()


def test_stream_none_is_a_no_op_everywhere_as_torch():
    for lib in (torch, ember):
        with lib.cuda.stream(None) as s:
            assert s is None
        assert lib.cuda.set_stream(None) is None
        context = lib.cuda.StreamContext(None)
        assert context.__enter__() is None and context.__exit__(None, None, None) is None


def test_the_names_are_torchs():
    for name in ("Event", "Stream", "StreamContext", "current_stream", "default_stream", "set_stream", "stream",
                 "synchronize"):
        assert hasattr(torch.cuda, name) and hasattr(ember.cuda, name)
    for method in ("record", "wait", "query", "synchronize", "elapsed_time", "ipc_handle"):
        assert hasattr(torch.cuda.Event, method) and hasattr(ember.cuda.Event, method)
    for method in ("wait_event", "wait_stream", "record_event", "query", "synchronize"):
        assert hasattr(torch.cuda.Stream, method) and hasattr(ember.cuda.Stream, method)


# --- with a GPU -----------------------------------------------------------------------------

@needs_cuda
def test_events_time_work_on_the_device():
    start, end = ember.cuda.Event(enable_timing=True), ember.cuda.Event(enable_timing=True)
    assert start.query() and repr(start) == "<ember.cuda.Event uninitialized>"
    x = ember.randn(1024, 1024, device="cuda")
    start.record()
    for _ in range(10):
        x = x @ x / 1024
    end.record()
    end.synchronize()
    assert end.query()
    assert start.elapsed_time(end) > 0
    with pytest.raises(RuntimeError, match="enable_timing=True"):
        ember.cuda.Event().elapsed_time(end)
    with pytest.raises(RuntimeError, match="must be recorded"):
        ember.cuda.Event(enable_timing=True).elapsed_time(end)


@needs_cuda
def test_a_stream_context_makes_the_stream_current_and_restores_the_previous_one():
    before = ember.cuda.current_stream()
    side = ember.cuda.Stream()
    assert side != before and side.device == ember.device("cuda", ember.cuda.current_device())
    with ember.cuda.stream(side) as entered:
        assert entered is side and ember.cuda.current_stream() == side
        y = ember.ones(256, 256, device="cuda") * 3
    assert ember.cuda.current_stream() == before
    before.wait_stream(side)  # the default stream's later work waits for the side stream's
    event = side.record_event()
    event.synchronize()
    side.synchronize()
    assert side.query() and event.query()
    assert float(y.sum().item()) == 3 * 256 * 256
    assert ember.cuda.default_stream().cuda_stream == 0
