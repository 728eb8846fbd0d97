"""Tests for ember/parallel.py: ``set_num_threads``/``get_num_threads`` as torch's,
applied to every BLAS/OpenMP pool in the process."""

import numpy as np
import pytest
import torch
from threadpoolctl import threadpool_info, threadpool_limits

import ember


@pytest.fixture(autouse=True)
def restore_pools():
    limiter = threadpool_limits(limits=None)  # records the pools' current sizes
    torch_threads = torch.get_num_threads()
    yield
    limiter.restore_original_limits()
    torch.set_num_threads(torch_threads)


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_set_then_get_as_torch(threads):
    ember.set_num_threads(threads)
    torch.set_num_threads(threads)
    assert ember.get_num_threads() == torch.get_num_threads() == threads
    assert {pool["num_threads"] for pool in threadpool_info()} == {threads}


def test_a_numpy_integer_is_a_thread_count():
    ember.set_num_threads(np.int64(1))
    assert ember.get_num_threads() == 1


@pytest.mark.parametrize("value", [0, -2, 2.5, "2", True, None])
def test_bad_counts_raise_torchs_error(value):
    with pytest.raises(RuntimeError) as expected:
        torch.set_num_threads(value)
    with pytest.raises(RuntimeError) as got:
        ember.set_num_threads(value)
    assert str(got.value) == str(expected.value)


def _run(code):
    """``code``'s printed lines from a fresh interpreter: the inter-op count is set once per process."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return done.stdout.splitlines()


_INTEROP = """
import {lib}
print({lib}.get_num_interop_threads())
{lib}.set_num_interop_threads(3)
print({lib}.get_num_interop_threads())
try:
    {lib}.set_num_interop_threads(2)
except RuntimeError as error:
    print(error)
print({lib}.get_num_interop_threads())
"""


def test_interop_threads_are_set_once_as_torchs():
    """Default (one per physical core), set, and the error of a second set: torch's, line for line."""
    assert _run(_INTEROP.format(lib="ember")) == _run(_INTEROP.format(lib="torch"))


_BAD_INTEROP = """
import {lib}
for value in (0, -1, 2.5, True, "2"):
    try:
        {lib}.set_num_interop_threads(value)
    except RuntimeError as error:
        print(error)
{lib}.set_num_interop_threads(2)  # a refused count leaves the pool unset
print({lib}.get_num_interop_threads())
"""


def test_bad_interop_counts_raise_torchs_error():
    assert _run(_BAD_INTEROP.format(lib="ember")) == _run(_BAD_INTEROP.format(lib="torch"))
