"""ember.profiler against torch.profiler on the same program: the same op names (those
ember and torch both dispatch), call counts, input shapes, nesting under record_function,
the table's columns, the schedule's recorded steps, and a Chrome trace that loads."""

import json

import numpy as np
import pytest
import torch

import ember


def _run(lib, **options):
    x = lib.tensor(np.ones((8, 8), dtype=np.float32), requires_grad=True)
    with lib.profiler.profile(activities=[lib.profiler.ProfilerActivity.CPU], record_shapes=True,
                              **options) as prof:
        with lib.profiler.record_function("block"):
            y = (x @ x).sum()
        y.backward()
    return prof


def test_ops_counts_shapes_and_ranges_as_torch():
    averages = {lib.__name__: {e.key: e for e in _run(lib).key_averages(group_by_input_shape=True)}
                for lib in (torch, ember)}
    for name in ("block", "aten::sum"):
        e, t = averages["ember"][name], averages["torch"][name]
        assert e.count == t.count == 1
    assert averages["ember"]["aten::mm"].input_shapes == [[8, 8], [8, 8]]
    block = averages["ember"]["block"]
    assert block.cpu_time_total >= averages["ember"]["aten::mm"].cpu_time_total  # it encloses the product


def test_the_table_has_torchs_columns_and_the_total():
    lines = {lib.__name__: _run(lib, profile_memory=True).key_averages().table(sort_by="cpu_time_total",
                                                                               row_limit=5).splitlines()
             for lib in (torch, ember)}
    ember_header = lines["ember"][1].split()
    for column in ("Name", "Self", "CPU", "%", "total", "avg", "Mem", "Calls"):
        assert column in ember_header
    assert lines["ember"][-1].startswith("Self CPU time total:") and lines["torch"][-1].startswith("Self CPU")
    assert any("block" in line for line in lines["ember"])


def test_self_time_excludes_children():
    events = _run(ember).events()
    block = next(e for e in events if e.name == "block")
    assert block.cpu_children and all(child.cpu_parent is block for child in block.cpu_children)
    assert block.self_cpu_time_total == pytest.approx(
        block.cpu_time_total - sum(c.cpu_time_total for c in block.cpu_children))


def test_schedule_records_the_active_steps_and_hands_over_each_cycle(tmp_path):
    seen = []
    for lib in (torch, ember):
        cycles = []
        steps = lib.profiler.schedule(wait=1, warmup=1, active=2, repeat=2)
        x = lib.ones(4)
        with lib.profiler.profile(schedule=steps, on_trace_ready=lambda p: cycles.append(
                sum(1 for e in p.events() if e.name == "aten::mul"))) as prof:
            for _ in range(10):
                x * 2
                prof.step()
        seen.append(cycles)
    assert seen[0] == seen[1] == [2, 2]
    assert [ember.profiler.schedule(wait=1, warmup=1, active=2, skip_first=1)(s).name for s in range(6)] == \
        [torch.profiler.schedule(wait=1, warmup=1, active=2, skip_first=1)(s).name for s in range(6)]


def test_a_chrome_trace_and_the_tensorboard_handler(tmp_path):
    path = tmp_path / "trace.json"
    _run(ember).export_chrome_trace(str(path))
    events = json.loads(path.read_text())["traceEvents"]
    assert {"block", "aten::mm"} <= {e["name"] for e in events} and all(e["ph"] == "X" for e in events)
    handler = ember.profiler.tensorboard_trace_handler(str(tmp_path / "tb"), worker_name="w")
    with ember.profiler.profile(schedule=ember.profiler.schedule(wait=0, warmup=0, active=1),
                                on_trace_ready=handler) as prof:
        ember.ones(2) + 1
        prof.step()
    assert [p.name.startswith("w.") and p.name.endswith(".pt.trace.json") for p in (tmp_path / "tb").iterdir()]


def test_nothing_is_recorded_outside_a_profile():
    with ember.profiler.record_function("idle"):
        ember.ones(2) * 2
    from ember.dispatch_modes import modes

    assert modes.profile is None


def test_the_autograd_profiler_spelling():
    for lib in (torch, ember):
        with lib.autograd.profiler.profile(record_shapes=True) as prof:
            with lib.autograd.profiler.record_function("step"):
                lib.ones(3) * 2
        assert "step" in prof.table() and any(e.name == "aten::mul" for e in prof.function_events)
    with ember.autograd.profiler.profile(enabled=False) as prof:
        ember.ones(3) * 2
    assert len(prof.function_events) == 0
