"""DataLoader faults, each scenario in a forked child with a join timeout
(PyTorch's test/test_dataloader.py: test_error_workers, test_error_in_init, test_segfault,
test_timeout, test_large_sampler_indices, test_partial_workers, test_proper_exit).

Every scenario also checks that no worker process is left behind.
"""

import ctypes
import os
import re
import signal
import time

import psutil

import ember
from ember.data import DataLoader, Dataset, IterableDataset


class Squares(Dataset):
    def __init__(self, n=12, fail_at=None, error=ValueError, kill_at=None, segfault_at=None, sleep=0.0):
        self.n, self.fail_at, self.error = n, fail_at, error
        self.kill_at, self.segfault_at, self.sleep = kill_at, segfault_at, sleep

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if i == self.fail_at:
            raise self.error(f"bad sample {i}")
        if i == self.kill_at:
            os.kill(os.getpid(), signal.SIGKILL)
        if i == self.segfault_at:
            ctypes.string_at(0)  # dereference NULL
        if self.sleep:
            time.sleep(self.sleep)
        return i * i


def test_exception_in_worker_is_reraised_with_type_worker_id_traceback_and_keys(child):
    def scenario():
        loader = DataLoader(Squares(fail_at=5), batch_size=2, num_workers=2)
        out = []
        for batch in loader:
            out.append(batch.tolist())
        return out

    outcome = child(scenario)
    assert not outcome["ok"] and outcome["type"] == "ValueError"
    # keys 4, 5 form task 2, sent to worker 0 (round robin)
    assert outcome["message"].startswith("Caught ValueError in DataLoader worker process 0.")
    assert "Original Traceback (most recent call last):" in outcome["message"]
    assert "bad sample 5" in outcome["message"] and "__getitem__" in outcome["message"]
    assert "[4, 5]" in outcome["message"]
    assert outcome["leftover_children"] == 0


def test_batches_before_the_failing_one_arrive_and_the_epoch_can_go_on(child):
    def scenario():
        iterator = iter(DataLoader(Squares(fail_at=5), batch_size=2, num_workers=2))
        seen = [next(iterator).tolist(), next(iterator).tolist()]
        try:
            next(iterator)
        except ValueError:
            seen.append("error")
        seen.extend(batch.tolist() for batch in iterator)
        return seen

    outcome = child(scenario)
    assert outcome["ok"], outcome
    assert outcome["value"] == [[0, 1], [4, 9], "error", [36, 49], [64, 81], [100, 121]]
    assert outcome["leftover_children"] == 0


def test_key_error_keeps_its_type_and_readable_message(child):
    def scenario():
        list(DataLoader(Squares(fail_at=0, error=KeyError), batch_size=2, num_workers=1))

    outcome = child(scenario)
    assert outcome["type"] == "KeyError"
    assert "Caught KeyError in DataLoader worker process 0." in outcome["message"]
    assert "\\n" not in outcome["message"]  # line breaks kept, not escaped by KeyError's repr


def test_exception_type_needing_more_arguments_becomes_runtime_error(child):
    class Picky(Exception):
        def __init__(self, code, text):
            super().__init__(code, text)

    class Raises(Dataset):
        def __len__(self):
            return 2

        def __getitem__(self, i):
            raise Picky(3, "no")

    outcome = child(lambda: list(DataLoader(Raises(), num_workers=1)))
    assert outcome["type"] == "RuntimeError"
    assert "Caught Picky in DataLoader worker process 0." in outcome["message"]


def test_worker_killed_by_sigkill_raises_instead_of_waiting(child):
    def scenario():
        try:
            list(DataLoader(Squares(kill_at=3), batch_size=1, num_workers=2))
        except RuntimeError as error:
            return str(error)
        return "no error"

    outcome = child(scenario)
    message = outcome["value"]
    assert re.search(r"DataLoader worker \(pid\(s\) \d+\) exited unexpectedly", message), message
    assert "killed by signal: Killed" in message
    # A missed death would leave the main process waiting for the dead worker's batch
    # until the harness's timeout fails the test; no bound on the time itself, which
    # depends on the machine's load.
    assert outcome["leftover_children"] == 0


def test_worker_segfault_reports_the_signal(child):
    def scenario():
        list(DataLoader(Squares(segfault_at=1), batch_size=1, num_workers=1))

    outcome = child(scenario)
    assert outcome["type"] == "RuntimeError"
    assert re.search(r"DataLoader worker \(pid \d+\) is killed by signal: Segmentation fault", outcome["message"])
    assert outcome["leftover_children"] == 0


def test_timeout(child):
    def scenario():
        list(DataLoader(Squares(n=4, sleep=600.0), batch_size=1, num_workers=1, timeout=0.5))

    # The sample takes ten minutes and the harness gives up after HARNESS_TIMEOUT: an
    # outcome at all means the timeout fired, however slow the machine is.
    outcome = child(scenario)
    assert outcome["type"] == "RuntimeError"
    assert outcome["message"] == "DataLoader timed out after 0.5 seconds"
    assert outcome["seconds"] >= 0.5
    assert outcome["leftover_children"] == 0


def test_error_in_worker_init_fn_is_reported(child):
    def init(worker_id):
        raise RuntimeError(f"init failed in {worker_id}")

    outcome = child(lambda: list(DataLoader(Squares(), batch_size=2, num_workers=2, worker_init_fn=init)))
    assert outcome["type"] == "RuntimeError"
    assert outcome["message"].startswith("Caught RuntimeError in DataLoader worker process 0.")
    assert "init failed in 0" in outcome["message"]
    assert outcome["leftover_children"] == 0


def test_error_in_iterable_dataset_iter_is_reported(child):
    class BadStream(IterableDataset):
        def __iter__(self):
            raise TypeError("cannot stream")

    outcome = child(lambda: list(DataLoader(BadStream(), num_workers=1)))
    assert outcome["type"] == "TypeError"
    assert "cannot stream" in outcome["message"]


def test_error_while_index_queues_hold_huge_batches_does_not_hang(child):
    # test_large_sampler_indices: a failing collate while big index lists are queued
    def fail(batch):
        raise RuntimeError("collate failed")

    def scenario():
        sampler = [list(range(100_000))] * 8
        list(DataLoader(Squares(n=100_000), batch_sampler=sampler, num_workers=2, collate_fn=fail))

    outcome = child(scenario)
    assert outcome["type"] == "RuntimeError" and "collate failed" in outcome["message"]
    assert outcome["leftover_children"] == 0


def test_break_and_drop_iterator_shuts_workers_down(child):
    def scenario():
        loader = DataLoader(Squares(n=100), batch_size=2, num_workers=2)
        iterator = iter(loader)
        pids = [w.pid for w in iterator._workers]
        alive_while_iterating = all(psutil.pid_exists(p) for p in pids)
        for i, _ in enumerate(iterator):
            if i == 2:
                break
        del iterator
        deadline = time.monotonic() + 20  # the shutdown's joins, with room for a loaded machine
        while any(_running(p) for p in pids) and time.monotonic() < deadline:
            time.sleep(0.02)
        return alive_while_iterating, [_running(p) for p in pids]

    outcome = child(scenario)
    alive, still_running = outcome["value"]
    assert alive and not any(still_running)


def test_exhausted_epoch_and_persistent_loader_deletion_reap_workers(child):
    def scenario():
        list(DataLoader(Squares(), batch_size=4, num_workers=2))
        after_epoch = len(psutil.Process().children())
        loader = DataLoader(Squares(), batch_size=4, num_workers=2, persistent_workers=True)
        list(loader)
        list(loader)
        during = len(psutil.Process().children())
        del loader
        return after_epoch, during

    outcome = child(scenario)
    assert outcome["value"] == (0, 2)
    assert outcome["leftover_children"] == 0


def test_main_process_death_ends_workers(child):
    # Workers notice their parent died (they are re-parented) and exit by themselves.
    def scenario():
        import multiprocessing

        reader, writer = multiprocessing.Pipe(duplex=False)

        def doomed_parent():
            iterator = iter(DataLoader(Squares(n=100, sleep=0.01), batch_size=1, num_workers=2))
            next(iterator)
            writer.send([w.pid for w in iterator._workers])
            os._exit(0)  # no cleanup at all

        process = multiprocessing.get_context("fork").Process(target=doomed_parent)
        process.start()
        pids = reader.recv()
        process.join()
        deadline = time.monotonic() + 5
        while any(_running(p) for p in pids) and time.monotonic() < deadline:
            time.sleep(0.05)
        return [_running(p) for p in pids]

    outcome = child(scenario)
    assert outcome["value"] == [False, False]


def _running(pid):
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


_ = ember


BIG_BATCHES_PARENT = """
import sys, time
import numpy as np
from ember.data import DataLoader, Dataset

class Big(Dataset):  # 1 MiB a sample: a few batches fill the result pipe (64 KiB on Linux)
    def __len__(self):
        return 1000

    def __getitem__(self, i):
        return np.full(1 << 18, i, dtype=np.float32)

iterator = iter(DataLoader(Big(), batch_size=2, num_workers=2, prefetch_factor=4))
next(iterator)
print(" ".join(str(w.pid) for w in iterator._workers), flush=True)
time.sleep(600)  # reads nothing more: the workers' batches wait in the full pipe
"""


def test_main_process_killed_with_big_batches_in_flight_ends_workers(tmp_path):
    # NOTE [ DataLoader worker shutdown ] point 4: a worker whose batches (over 64 KiB) sit
    # in a full result pipe must still exit when its parent is SIGKILLed, as torch's do
    import subprocess
    import sys

    script = tmp_path / "parent.py"
    script.write_text(BIG_BATCHES_PARENT)
    parent = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    try:
        pids = [int(pid) for pid in parent.stdout.readline().split()]
        time.sleep(1.0)  # the workers fill the pipe and their queues' buffers
        assert len(pids) == 2 and all(_running(pid) for pid in pids)
        parent.kill()
        parent.wait()
        deadline = time.monotonic() + 5
        while any(_running(pid) for pid in pids) and time.monotonic() < deadline:
            time.sleep(0.05)
        left = [pid for pid in pids if _running(pid)]
    finally:
        parent.kill()
    for pid in left:  # (do not leave them to the next test)
        os.kill(pid, signal.SIGKILL)
    assert left == [], "workers outlived their killed parent"
