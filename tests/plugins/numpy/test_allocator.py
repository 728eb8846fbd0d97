"""The ``cpu`` backend's caching allocator (ember_numpy/allocator.py) and ``ember.cpu``'s
view of it: freed blocks are reused without new page faults, the figures add up, the
cache can be emptied and switched off."""

import json
import os
import resource
import subprocess
import sys
import textwrap

import pytest

import ember
from ember_numpy import allocator

pytestmark = pytest.mark.skipif(not allocator.is_supported(), reason="needs glibc's mallopt/mallinfo2")


def page_faults_of(work, rounds=20):
    work()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(rounds):
        work()
    return (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) / rounds


def a_step():
    # about what a layer's forward and backward allocate and free: 8 MB in a few blocks
    x = ember.ones(1000, 1000)
    y = (x * 2).exp()
    return float(y[0, 0])


def test_freed_blocks_are_reused_without_faulting_in_new_pages():
    ember.ones(1)  # the backend exists (creating it turns the cache on)
    try:
        allocator.disable()
        ember.cpu.empty_cache()
        uncached = page_faults_of(a_step)
        allocator.enable()
        cached = page_faults_of(a_step)
    finally:
        allocator.enable_by_default()
    # Uncached, each 4 MB block is about 1,000 fresh 4 KiB pages (fewer where the kernel
    # backs it with transparent huge pages); cached, the step reuses mapped memory.
    assert cached < 50 and cached <= uncached


def test_memory_stats_count_live_and_cached_bytes():
    # In a fresh process: the figures are the whole heap's, so nothing else may free or
    # allocate between the readings (pytest itself does).
    code = """
        import json, ember
        ember.ones(1)
        before = ember.cpu.memory_stats()
        x = ember.empty(4_000_000, dtype=ember.float64)  # 32 MB
        during = ember.cpu.memory_stats()
        allocated, reserved = ember.cpu.memory_allocated(), ember.cpu.memory_reserved()
        del x
        after = ember.cpu.memory_stats()
        ember.cpu.empty_cache()
        emptied = ember.cpu.memory_stats()
        print(json.dumps([before, during, after, emptied, allocated, reserved]))
    """
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, check=True)
    before, during, after, emptied, allocated, reserved = json.loads(out.stdout)
    live, cached = "allocated_bytes.all.current", "cached_free_bytes"
    assert during[live] - before[live] >= 32_000_000 and allocated == during[live] and reserved >= allocated
    assert after[cached] - during[cached] >= 32_000_000  # freed, and kept for reuse
    assert after["reserved_bytes.all.current"] >= 32_000_000
    assert emptied["reserved_bytes.all.current"] < after["reserved_bytes.all.current"] - 16_000_000


def test_the_cache_is_on_by_default_and_ember_cpu_caching_0_turns_it_off():
    code = "import ember; ember.ones(1); print(ember.cpu.memory_stats()['caching'])"
    on = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    off = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "EMBER_CPU_CACHING": "0"})
    assert on.stdout.strip() == "True" and off.stdout.strip() == "False"


def test_ember_cpu_answers_like_torch_cpu():
    import torch

    assert ember.cpu.is_available() is torch.cpu.is_available() is True
    assert ember.cpu.device_count() == torch.cpu.device_count() == 1
    assert ember.cpu.current_device() == torch.cpu.current_device() == "cpu"
    assert ember.cpu.synchronize() is torch.cpu.synchronize() is None


def test_glibc_takes_the_thresholds():
    ember.ones(1)
    try:
        assert allocator.enable() is True and allocator.is_caching()
    finally:
        allocator.enable_by_default()
