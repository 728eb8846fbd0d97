"""Shared helpers for the ember-data tests: a child-process harness for worker faults."""

import multiprocessing
import time
import traceback

import psutil
import pytest

HARNESS_TIMEOUT = 30.0  # far above any scenario's run time: reaching it means a hang


def _child(scenario, connection):
    start = time.monotonic()
    try:
        value = scenario()
        outcome = {"ok": True, "value": value}
    except BaseException as error:  # noqa: B036 - report everything to the parent
        outcome = {"ok": False, "type": type(error).__name__, "message": str(error),
                   "mro": [c.__name__ for c in type(error).__mro__], "traceback": traceback.format_exc()}
    outcome["seconds"] = time.monotonic() - start
    # Whatever the scenario did, its DataLoader workers must be gone by now (give the
    # shutdown path a moment to reap them).
    deadline = time.monotonic() + 5.0
    while psutil.Process().children(recursive=True) and time.monotonic() < deadline:
        time.sleep(0.05)
    outcome["leftover_children"] = len(psutil.Process().children(recursive=True))
    connection.send(outcome)
    connection.close()


def run_in_child(scenario, timeout=HARNESS_TIMEOUT):
    """Run ``scenario()`` in a forked child with a join timeout, so a regression that
    hangs fails this test instead of freezing the suite (PyTorch's ErrorTrackingProcess)."""
    context = multiprocessing.get_context("fork")
    receiver, sender = context.Pipe(duplex=False)
    process = context.Process(target=_child, args=(scenario, sender))
    process.start()
    sender.close()
    if not receiver.poll(timeout):
        for child in psutil.Process(process.pid).children(recursive=True):
            child.kill()
        process.kill()
        process.join()
        pytest.fail(f"scenario {scenario.__name__} hung for more than {timeout} s")
    outcome = receiver.recv()
    process.join(timeout)
    return outcome


@pytest.fixture
def child():
    return run_in_child
