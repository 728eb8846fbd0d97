"""What runs inside a DataLoader worker process: seeding, ``WorkerInfo``, the loop.

PyTorch counterpart: torch/utils/data/_utils/worker.py (v2.13). ember leaves out the
DataPipe hooks and the distributed shared seed.

A worker waits on its own index queue for ``(task_id, keys)``, fetches and collates
the batch with the same fetcher the main process uses, and puts ``(task_id, batch)``
(or an ``ExceptionWrapper``) on the result queue shared by all workers. ``None`` on the
index queue tells it to exit (see NOTE [ DataLoader worker shutdown ] in
ember_data/multiprocessing_iter.py).
"""

import os
import queue
import random
from multiprocessing.reduction import ForkingPickler

import numpy as np

from ember_data._utils import STATUS_CHECK_INTERVAL, signal_handling
from ember_data._utils.exception_wrapper import ExceptionWrapper
from ember_data._utils.fetch import create_fetcher


class WorkerInfo:
    """``id``, ``num_workers``, ``seed`` and ``dataset`` (this worker's copy); read-only."""

    _frozen = False

    def __init__(self, **kwargs):
        for key, value in kwargs.items():
            setattr(self, key, value)
        self._keys = tuple(kwargs)
        self._frozen = True

    def __setattr__(self, key, value):
        if self._frozen:
            raise RuntimeError(f"Cannot assign attributes to {type(self).__name__} objects")
        super().__setattr__(key, value)

    def __repr__(self):
        fields = ", ".join(f"{key}={getattr(self, key)}" for key in self._keys)
        return f"{type(self).__name__}({fields})"


_worker_info = None  # set once in each worker process; None in the main process


def get_worker_info():
    """In a worker: its ``WorkerInfo``. In the main process: None.

    An ``IterableDataset`` uses it to give each worker its own share of the stream,
    e.g. ``range(start + info.id, end, info.num_workers)`` in ``__iter__``.

    >>> from ember.data import get_worker_info
    >>> get_worker_info() is None  # in the main process
    True
    """
    return _worker_info


class IterableDatasetStopIteration:
    """A worker's message: my copy of the iterable dataset is exhausted."""

    def __init__(self, worker_id):
        self.worker_id = worker_id


class ResumeIteration:
    """The main process's message to a persistent worker: a new epoch starts."""

    def __init__(self, seed=None):
        self.seed = seed


def _generate_state(base_seed, worker_id):
    """The 4 x 32-bit seed a worker gives NumPy's legacy global RNG.

    PyTorch hashes ``[worker_id, low 32 bits, high 32 bits]`` of the base seed with
    NumPy's SeedSequence mixing (pool of 4 words); ``SeedSequence`` itself computes
    exactly that, so NumPy's global stream in a worker is the one PyTorch's worker gets.
    """
    entropy = [worker_id, base_seed & 0xFFFF_FFFF, base_seed >> 32]
    return np.random.SeedSequence(entropy).generate_state(4, dtype=np.uint32).tolist()


def seed_worker(base_seed, worker_id):
    """Give ember, ``random`` and NumPy their per-worker seed (``base_seed +
    worker_id``)."""
    import ember

    seed = base_seed + worker_id
    random.seed(seed)
    ember.manual_seed(seed & 0xFFFF_FFFF_FFFF_FFFF)
    np.random.seed(_generate_state(base_seed, worker_id))
    return seed


class _ParentWatchdog:
    """Tells a worker when its parent died (it has been re-parented), so it exits."""

    def __init__(self):
        self.parent_pid = os.getppid()

    def is_alive(self):
        return os.getppid() == self.parent_pid


def worker_loop(is_iterable, dataset, index_queue, result_queue, done_event,
                auto_collation, collate_fn, drop_last, base_seed, init_fn, worker_id,
                num_workers):
    """The body of a worker process (the ``target`` of ``multiprocessing.Process``)."""
    global _worker_info
    where = f"in DataLoader worker process {worker_id}"
    watchdog = _ParentWatchdog()
    try:
        signal_handling.set_worker_signal_handlers()
        seed = seed_worker(base_seed, worker_id)
        _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed,
                                  dataset=dataset)

        init_error = None
        fetcher = None
        try:
            if init_fn is not None:
                init_fn(worker_id)
            fetcher = create_fetcher(is_iterable, dataset, auto_collation, collate_fn,
                                     drop_last)
        except Exception:
            # reported as the first batch's result
            init_error = ExceptionWrapper(where=where)

        # -- the task loop --
        iteration_end = False
        while watchdog.is_alive():
            try:
                message = index_queue.get(timeout=STATUS_CHECK_INTERVAL)
            except queue.Empty:
                continue
            if message is None:  # shutdown
                break
            if isinstance(message, ResumeIteration):  # a persistent worker's new epoch
                result_queue.put(_pickled(message, None, where, None))
                iteration_end = False
                if init_error is None:
                    fetcher = create_fetcher(is_iterable, dataset, auto_collation,
                                             collate_fn, drop_last)
                continue
            if done_event.is_set() or iteration_end:
                continue  # drain what is left in the queue until ``None`` arrives
            task_id, keys = message
            if init_error is not None:
                result, init_error = init_error, None
            else:
                result = _fetch(fetcher, keys, is_iterable, worker_id, where)
                iteration_end = isinstance(result, IterableDatasetStopIteration)
            result_queue.put(_pickled(task_id, result, where, keys))
            # do not hold a batch while waiting for the next task
            del result, keys, message
    except KeyboardInterrupt:
        pass
    if done_event.is_set() or not watchdog.is_alive():
        # Nobody will read any more (the main process stopped, or died): do not block
        # exit on flushing batches into a full pipe, which other workers keep open.
        result_queue.cancel_join_thread()
        result_queue.close()


def _pickled(task_id, result, where, keys):
    """``(task_id, result)`` pickled here, not in the queue's feeder thread: there a
    pickling error would only be printed and the main process would wait forever."""
    try:
        return bytes(ForkingPickler.dumps((task_id, result)))
    except Exception:
        error = ExceptionWrapper(where=f"{where} while pickling its batch for the main process", keys=keys)
        return bytes(ForkingPickler.dumps((task_id, error)))


def _fetch(fetcher, keys, is_iterable, worker_id, where):
    try:
        return fetcher.fetch(keys)
    except StopIteration:
        if is_iterable:
            return IterableDatasetStopIteration(worker_id)
        return ExceptionWrapper(where=where, keys=keys)
    except Exception:
        return ExceptionWrapper(where=where, keys=None if is_iterable else keys)
