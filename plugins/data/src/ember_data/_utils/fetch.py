"""Fetchers: turn what the sampler yields into a batch (fetch, then collate).

PyTorch counterpart: torch/utils/data/_utils/fetch.py (v2.13).

The same fetcher runs in the main process (``num_workers=0``) and in every worker, so
the two paths give the same batches.
"""


class MapDatasetFetcher:
    """``dataset[key]`` for each key of a batch (or ``dataset.__getitems__(keys)``)."""

    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.dataset = dataset
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn
        self.drop_last = drop_last

    def fetch(self, possibly_batched_index):
        if not self.auto_collation:
            return self.collate_fn(self.dataset[possibly_batched_index])
        getitems = getattr(self.dataset, "__getitems__", None)
        if getitems:
            data = getitems(possibly_batched_index)
        else:
            data = [self.dataset[key] for key in possibly_batched_index]
        return self.collate_fn(data)


class IterableDatasetFetcher:
    """``next(iter(dataset))`` once per key; raises StopIteration when the stream ends
    (or, with ``drop_last``, when it cannot fill a whole batch)."""

    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.dataset_iter = iter(dataset)
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn
        self.drop_last = drop_last
        self.ended = False

    def fetch(self, possibly_batched_index):
        if self.ended:
            raise StopIteration
        if not self.auto_collation:
            return self.collate_fn(next(self.dataset_iter))
        data = []
        for _ in possibly_batched_index:
            try:
                data.append(next(self.dataset_iter))
            except StopIteration:
                self.ended = True
                break
        if not data or (self.drop_last and len(data) < len(possibly_batched_index)):
            raise StopIteration
        return self.collate_fn(data)


def create_fetcher(is_iterable, dataset, auto_collation, collate_fn, drop_last):
    kind = IterableDatasetFetcher if is_iterable else MapDatasetFetcher
    return kind(dataset, auto_collation, collate_fn, drop_last)
