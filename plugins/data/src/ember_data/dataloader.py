"""``DataLoader``: batches from a dataset, in the main process or in worker processes.

PyTorch counterpart: torch/utils/data/dataloader.py (v2.13). ember leaves out
DataPipes, ``pin_memory_device``, ``in_order=False`` and the distributed shared seed.

The pipeline, one short file per stage::

    sampler (sampler.py) -> batch_sampler -> fetcher (_utils/fetch.py) -> collate_fn (_utils/collate.py)

``_SingleProcessDataLoaderIter`` below runs it in the main process; with
``num_workers > 0``, ``_MultiProcessingDataLoaderIter`` (multiprocessing_iter.py)
sends the keys to worker processes, which fetch and collate, and hands the batches
back in sampler order.
"""

import multiprocessing
import warnings

from ember_data._utils import collate
from ember_data._utils.fetch import create_fetcher
from ember_data._utils.pin_memory import pin_memory as _pin_memory
from ember_data.dataset import IterableDataset
from ember_data.sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler

default_collate = collate.default_collate
default_convert = collate.default_convert


class _InfiniteConstantSampler(Sampler):
    """For an IterableDataset: keys carry no meaning, so yield ``None`` forever."""

    def __iter__(self):
        while True:
            yield None


class DataLoader:
    """Iterate over ``dataset`` in batches.

    Args:
        dataset: a map-style ``Dataset`` or an ``IterableDataset``.
        batch_size (int or None): samples per batch; None turns automatic batching off.
        shuffle (bool): a ``RandomSampler`` instead of a ``SequentialSampler``.
        sampler: the keys to fetch (excludes ``shuffle``).
        batch_sampler: lists of keys (excludes batch_size, shuffle, sampler, drop_last).
        num_workers (int): worker processes; 0 loads in the main process.
        collate_fn: merges a list of samples into a batch (``default_collate``).
        pin_memory (bool): pinned host memory for batches when CUDA is available; a
            no-op with a warning otherwise (NOTE [ pin_memory on CPU ]).
        drop_last (bool): drop the last, incomplete batch.
        timeout (float): seconds to wait for a worker's batch before raising.
        worker_init_fn: called with the worker id in each worker, after seeding.
        multiprocessing_context: a context or its name ("fork", "spawn", "forkserver").
        generator: the ``ember.Generator`` for the RandomSampler and the workers' base seed.
        prefetch_factor (int): batches loaded ahead per worker (2 by default with workers).
        persistent_workers (bool): keep the workers alive between epochs.

    >>> import ember
    >>> from ember.data import DataLoader, TensorDataset
    >>> loader = DataLoader(TensorDataset(ember.arange(5)), batch_size=2)
    >>> [batch[0].tolist() for batch in loader]
    [[0, 1], [2, 3], [4]]
    """

    _initialized = False

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None, num_workers=0,
                 collate_fn=None, pin_memory=False, drop_last=False, timeout=0, worker_init_fn=None,
                 multiprocessing_context=None, generator=None, *, prefetch_factor=None,
                 persistent_workers=False):
        _check_worker_options(num_workers, timeout, prefetch_factor, persistent_workers)
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self._is_iterable = isinstance(dataset, IterableDataset)

        if self._is_iterable:
            _check_iterable_options(shuffle, sampler, batch_sampler)
        elif sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")

        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, "
                                 "and drop_last")
            batch_size = None
            drop_last = False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually exclusive with "
                             "drop_last")

        if sampler is None:
            if self._is_iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)

        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self.multiprocessing_context = multiprocessing_context
        self._iterator = None
        self._initialized = True

    # --- options that may not change once the loader exists ---------------------
    def __setattr__(self, attr, value):
        if self._initialized and attr in ("batch_size", "batch_sampler", "sampler", "drop_last", "dataset",
                                          "persistent_workers"):
            raise ValueError(f"{attr} attribute should not be set after {type(self).__name__} is initialized")
        super().__setattr__(attr, value)

    @property
    def multiprocessing_context(self):
        return self._multiprocessing_context

    @multiprocessing_context.setter
    def multiprocessing_context(self, context):
        if context is not None:
            if self.num_workers <= 0:
                raise ValueError("multiprocessing_context can only be used with multi-process loading "
                                 f"(num_workers > 0), but got num_workers={self.num_workers}")
            if isinstance(context, str):
                methods = multiprocessing.get_all_start_methods()
                if context not in methods:
                    raise ValueError("multiprocessing_context option should specify a valid start method in "
                                     f"{methods!r}, but got multiprocessing_context={context!r}")
                context = multiprocessing.get_context(context)
            elif not isinstance(context, multiprocessing.context.BaseContext):
                raise TypeError("multiprocessing_context option should be a valid context object or a string "
                                f"specifying the start method, but got multiprocessing_context={context}")
        self._multiprocessing_context = context

    # --- iteration -----------------------------------------------------------------
    @property
    def _auto_collation(self):
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        """What the iterator draws from: lists of keys (auto-collation) or single keys."""
        return self.batch_sampler if self._auto_collation else self.sampler

    def _get_iterator(self):
        if self.num_workers == 0:
            return _SingleProcessDataLoaderIter(self)
        from ember_data.multiprocessing_iter import _MultiProcessingDataLoaderIter

        return _MultiProcessingDataLoaderIter(self)

    def __iter__(self):
        if self.persistent_workers and self.num_workers > 0:
            if self._iterator is None:
                self._iterator = self._get_iterator()
            else:
                self._iterator._reset(self)
            return self._iterator
        return self._get_iterator()

    def __len__(self):
        if self._is_iterable:
            length = len(self.dataset)  # TypeError when the dataset has no length, as in PyTorch
            if self.batch_size is not None:
                length = length // self.batch_size if self.drop_last else -(-length // self.batch_size)
            return length
        return len(self._index_sampler)


def _check_worker_options(num_workers, timeout, prefetch_factor, persistent_workers):
    if num_workers < 0:
        raise ValueError("num_workers option should be non-negative; use num_workers=0 to disable "
                         "multiprocessing.")
    if timeout < 0:
        raise ValueError("timeout option should be non-negative")
    if num_workers == 0 and prefetch_factor is not None:
        raise ValueError("prefetch_factor option could only be specified in multiprocessing.let num_workers > 0 "
                         "to enable multiprocessing, otherwise set prefetch_factor to None.")
    if prefetch_factor is not None and prefetch_factor < 0:
        raise ValueError("prefetch_factor option should be non-negative")
    if persistent_workers and num_workers == 0:
        raise ValueError("persistent_workers option needs num_workers > 0")


def _check_iterable_options(shuffle, sampler, batch_sampler):
    if shuffle not in (False, None):
        raise ValueError(f"DataLoader with IterableDataset: expected unspecified shuffle option, "
                         f"but got shuffle={shuffle}")
    if sampler is not None:
        raise ValueError(f"DataLoader with IterableDataset: expected unspecified sampler option, "
                         f"but got sampler={sampler}")
    if batch_sampler is not None:
        raise ValueError(f"DataLoader with IterableDataset: expected unspecified batch_sampler option, "
                         f"but got batch_sampler={batch_sampler}")


class _BaseDataLoaderIter:
    """What both iterators share: the sampler's iterator, the base seed, pinning."""

    def __init__(self, loader):
        self._dataset = loader.dataset
        self._is_iterable = loader._is_iterable
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._index_sampler = loader._index_sampler
        self._num_workers = loader.num_workers
        self._prefetch_factor = loader.prefetch_factor
        self._pin_memory = loader.pin_memory and _cuda_can_pin()
        self._timeout = loader.timeout
        self._collate_fn = loader.collate_fn
        self._generator = loader.generator
        self._sampler_iter = iter(self._index_sampler)
        self._base_seed = _draw_base_seed(loader.generator)
        self._persistent_workers = loader.persistent_workers
        self._num_yielded = 0

    def __iter__(self):
        return self

    def _reset(self, loader, first_iter=False):
        self._sampler_iter = iter(self._index_sampler)
        self._num_yielded = 0

    def _next_index(self):
        return next(self._sampler_iter)  # StopIteration ends the epoch

    def _next_data(self):
        raise NotImplementedError

    def __next__(self):
        if self._sampler_iter is None:
            self._reset(None)
        data = self._next_data()
        self._num_yielded += 1
        return data

    def __len__(self):
        return len(self._index_sampler)

    def __getstate__(self):
        raise NotImplementedError(f"{type(self).__name__} cannot be pickled")

    def _maybe_pin(self, data):
        return _pin_memory(data) if self._pin_memory else data


class _SingleProcessDataLoaderIter(_BaseDataLoaderIter):
    """Sampler -> fetcher -> collate, in the calling process."""

    def __init__(self, loader):
        super().__init__(loader)
        assert self._timeout == 0
        assert self._num_workers == 0
        self._fetcher = create_fetcher(self._is_iterable, self._dataset,
                                       self._auto_collation, self._collate_fn,
                                       self._drop_last)

    def _next_data(self):
        keys = self._next_index()
        return self._maybe_pin(self._fetcher.fetch(keys))


def _draw_base_seed(generator):
    """The seed workers derive theirs from, drawn from ``generator`` (or ember's
    default), so each epoch's workers get new seeds and a seeded generator repeats
    them."""
    import ember

    # PyTorch's draw: one 64-bit word, as a non-negative int64.
    return int(ember.empty((), dtype=ember.int64).random_(generator=generator).item())


def _cuda_can_pin():
    import ember

    if ember.cuda.is_available():
        return True
    warnings.warn("'pin_memory' argument is set as true but no accelerator is found, "
                  "then device pinned memory won't be used.", stacklevel=4)
    return False
