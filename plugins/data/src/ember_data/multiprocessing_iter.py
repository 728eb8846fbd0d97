"""The DataLoader iterator that loads batches in worker processes.

PyTorch counterpart: ``_MultiProcessingDataLoaderIter`` in torch/utils/data/dataloader.py
(v2.13). ember leaves out the pin-memory thread (batches are pinned as they arrive,
see _utils/pin_memory.py) and the shared-memory tensor transport: batches travel
pickled through the result queue (NumPy arrays pickle as one buffer copy).

# NOTE [ DataLoader data flow ]
# Each worker has its own index queue; all share one result queue. The main process
# numbers every batch it asks for (``_send_idx``), sends ``(task_id, keys)`` to the
# workers in turn, and keeps ``prefetch_factor * num_workers`` tasks outstanding.
# Results arrive in any order; ``_task_info[task_id]`` records the worker of each
# outstanding task and, once it arrived early, the batch itself, so batches are
# handed out strictly in ``task_id`` order (``_rcvd_idx``). Each delivered batch frees
# a slot and sends the next task. With an IterableDataset each worker streams its own
# copy; a worker whose copy is exhausted answers ``IterableDatasetStopIteration``, is
# marked unavailable, and the epoch ends when no worker is left.
#
# NOTE [ DataLoader worker shutdown ]
# The iterator must never leave processes behind, nor hang, however the loop ends:
# at the end of an epoch, on ``break`` (the iterator is dropped: ``__del__``), on an
# error in the main process or in a worker, on a worker killed by a signal, or when
# the main process itself dies. The pieces:
#
# 1. Waiting for a batch never blocks forever: the main process polls the result
#    queue every STATUS_CHECK_INTERVAL seconds and, when nothing came, checks that
#    every active worker is alive (``signal_handling.check_workers``); a dead worker
#    becomes a RuntimeError naming its pid and the signal. ``timeout`` bounds the
#    total wait ("DataLoader timed out after N seconds").
# 2. ``_shutdown_workers`` (on exhaustion without persistent workers, on a dead
#    worker or a timeout, and in ``__del__``) sets ``done_event`` first, so workers
#    stop fetching and merely drain their index queues; then puts ``None`` on every
#    index queue (the exit message, queued behind any pending work, so a full queue
#    cannot block it: index queues are unbounded), joins each worker for up to
#    WORKER_JOIN_TIMEOUT seconds (half a second after a timeout or a dead worker: the
#    others may be stuck too) and terminates what is still alive.
# 3. The queues' feeder threads would block interpreter exit while their data is
#    unread: ``cancel_join_thread`` on the index queues (main side) and on the result
#    queue (worker side, once ``done_event`` is set) drops the unread data instead.
# 4. A worker whose parent died (it is re-parented) exits by itself: it checks
#    ``os.getppid()`` every time its index-queue wait times out (torch's
#    ``ManagerWatchdog``), and then drops the batches it has not flushed
#    (``cancel_join_thread`` on the result queue: over 64 KiB of them fill the
#    pipe, which the other workers hold open, and flushing them would block its
#    exit for ever). Workers are daemonic, so a main process that exits normally
#    terminates them too.
# 5. Errors in workers are data: an exception becomes an ``ExceptionWrapper`` sent as
#    that task's result and re-raised, in order, by the main process; the workers keep
#    going (the error is raised once, and the next ``next()`` continues the epoch).
"""

import itertools
import pickle
import queue

from ember_data._utils import STATUS_CHECK_INTERVAL, WORKER_JOIN_TIMEOUT, signal_handling, worker
from ember_data._utils.exception_wrapper import ExceptionWrapper
from ember_data.dataloader import _BaseDataLoaderIter, _draw_base_seed


class _MultiProcessingDataLoaderIter(_BaseDataLoaderIter):
    """Keys out to ``num_workers`` processes, batches back in order (NOTE [ DataLoader data flow ])."""

    def __init__(self, loader):
        super().__init__(loader)
        assert self._num_workers > 0
        assert self._prefetch_factor > 0
        context = loader.multiprocessing_context
        if context is None:
            import multiprocessing as context
        self._worker_init_fn = loader.worker_init_fn
        self._worker_result_queue = context.Queue()
        self._workers_done_event = context.Event()
        self._index_queues = []
        self._workers = []
        self._shutdown = False
        for worker_id in range(self._num_workers):
            index_queue = context.Queue()
            index_queue.cancel_join_thread()  # NOTE [ DataLoader worker shutdown ] point 3
            process = context.Process(
                target=worker.worker_loop,
                args=(self._is_iterable, self._dataset, index_queue, self._worker_result_queue,
                      self._workers_done_event, self._auto_collation, self._collate_fn, self._drop_last,
                      self._base_seed, self._worker_init_fn, worker_id, self._num_workers),
                daemon=True)
            process.start()
            self._index_queues.append(index_queue)
            self._workers.append(process)
        self._reset(loader, first_iter=True)

    def _reset(self, loader, first_iter=False):
        super()._reset(loader, first_iter)
        self._send_idx = 0  # id of the next task to send
        self._rcvd_idx = 0  # id of the next batch to hand out
        # task id -> (worker id,) while outstanding, (worker id, batch) once arrived
        self._task_info = {}
        self._tasks_outstanding = 0
        # False once a worker has nothing more to give
        self._workers_status = [True] * self._num_workers
        self._worker_queue_idx_cycle = itertools.cycle(range(self._num_workers))
        # persistent workers: tell each a new epoch starts, wait for all to answer
        if not first_iter:
            self._base_seed = _draw_base_seed(self._generator)
            for index_queue in self._index_queues:
                index_queue.put(worker.ResumeIteration())
            waiting = self._num_workers
            while waiting > 0:
                task_id, _ = self._get_data()
                if isinstance(task_id, worker.ResumeIteration):
                    waiting -= 1
        for _ in range(self._prefetch_factor * self._num_workers):
            self._try_put_index()

    # --- receiving --------------------------------------------------------------
    def _try_get_data(self, timeout):
        """``(True, (task_id, data))``, or ``(False, None)`` if nothing came within
        ``timeout``.

        Raises a RuntimeError when an active worker has died (NOTE point 1).
        """
        try:
            payload = self._worker_result_queue.get(timeout=timeout)
        except queue.Empty:
            active = [w for w, up in zip(self._workers, self._workers_status) if up]
            signal_handling.check_workers(active)
            return False, None
        # workers pickle their results themselves (see worker._pickled)
        return True, pickle.loads(payload)

    def _get_data(self):
        """The next result from any worker; a dead worker or a timeout ends them all."""
        try:
            return self._wait_for_data()
        except RuntimeError:
            # The workers may be stuck (that is what a timeout means): short grace.
            self._shutdown_workers(join_timeout=STATUS_CHECK_INTERVAL * 5)
            raise

    def _wait_for_data(self):
        """Poll the result queue, so a dead worker is noticed, until data or ``timeout``."""
        waited = 0.0
        while True:
            step = STATUS_CHECK_INTERVAL
            if self._timeout > 0:
                step = min(step, self._timeout - waited)
            success, data = self._try_get_data(step)
            if success:
                return data
            waited += step
            if self._timeout > 0 and waited >= self._timeout:
                raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds")

    def _next_data(self):
        while True:
            # Skip tasks whose worker stopped (an exhausted IterableDataset copy).
            while self._rcvd_idx < self._send_idx:
                info = self._task_info[self._rcvd_idx]
                if len(info) == 2 or self._workers_status[info[0]]:
                    break
                del self._task_info[self._rcvd_idx]
                self._rcvd_idx += 1
            else:
                if not self._persistent_workers:
                    self._shutdown_workers()
                raise StopIteration

            if len(self._task_info[self._rcvd_idx]) == 2:  # arrived earlier, out of order
                data = self._task_info.pop(self._rcvd_idx)[1]
                return self._process_data(data)

            task_id, data = self._get_data()
            self._tasks_outstanding -= 1
            if isinstance(data, worker.IterableDatasetStopIteration):
                self._mark_worker_unavailable(data.worker_id)
                self._try_put_index()
                continue
            if task_id != self._rcvd_idx:
                self._task_info[task_id] += (data,)
                continue
            del self._task_info[task_id]
            return self._process_data(data)

    def _process_data(self, data):
        self._rcvd_idx += 1
        self._try_put_index()
        if isinstance(data, ExceptionWrapper):
            data.reraise()
        return self._maybe_pin(data)

    # --- sending ------------------------------------------------------------------
    def _try_put_index(self):
        assert self._tasks_outstanding < self._prefetch_factor * self._num_workers
        try:
            keys = self._next_index()
        except StopIteration:
            return
        for _ in range(self._num_workers):  # the next worker still taking work
            worker_id = next(self._worker_queue_idx_cycle)
            if self._workers_status[worker_id]:
                break
        else:
            return  # every worker is done
        self._index_queues[worker_id].put((self._send_idx, keys))
        self._task_info[self._send_idx] = (worker_id,)
        self._tasks_outstanding += 1
        self._send_idx += 1

    # --- shutdown (NOTE [ DataLoader worker shutdown ] point 2) ------------------------
    def _mark_worker_unavailable(self, worker_id, shutdown=False):
        """Send the worker its exit message; it stays out of the task rotation."""
        assert self._workers_status[worker_id] or (self._persistent_workers and shutdown)
        self._index_queues[worker_id].put(None)
        self._workers_status[worker_id] = False

    def _shutdown_workers(self, join_timeout=WORKER_JOIN_TIMEOUT):
        if getattr(self, "_shutdown", True):
            return  # already done, or __init__ failed before any worker started
        self._shutdown = True
        try:
            self._workers_done_event.set()
            for worker_id in range(len(self._workers)):
                if self._persistent_workers or self._workers_status[worker_id]:
                    self._mark_worker_unavailable(worker_id, shutdown=True)
            for process in self._workers:
                process.join(timeout=join_timeout)
            for index_queue in self._index_queues:
                index_queue.cancel_join_thread()
                index_queue.close()
            self._worker_result_queue.cancel_join_thread()
            self._worker_result_queue.close()
        finally:
            for process in self._workers:
                if process.is_alive():
                    process.terminate()
                    process.join(timeout=WORKER_JOIN_TIMEOUT)

    def __del__(self):
        self._shutdown_workers()
