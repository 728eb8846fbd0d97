"""DataLoader with worker processes: same batches as the main process, in order; seeds,
worker info, IterableDataset sharding, persistent workers (PyTorch's test_worker_seed,
test_worker_seed_reproducibility, test_multi_epochs_reproducibility, test_numpy_gen_state,
test_worker_init_fn, test_get_worker_info, test_multiple_dataloaders)."""

import random

import numpy as np
import pytest
import torch.utils.data._utils.worker as torch_worker

import ember
from ember.data import DataLoader, Dataset, IterableDataset, TensorDataset, get_worker_info
from ember_data._utils.worker import _generate_state


def _lists(loader):
    return [[t.tolist() for t in batch] for batch in loader]


class Slow(Dataset):
    """Later samples come back first from the workers: checks in-order delivery."""

    def __len__(self):
        return 16

    def __getitem__(self, i):
        import time

        time.sleep(0.02 if i % 4 == 0 else 0.0)
        return np.full(3, i, dtype=np.float32), i


def test_workers_give_the_same_batches_as_the_main_process():
    data = TensorDataset(ember.arange(30).reshape(15, 2).float(), ember.arange(15))
    expected = _lists(DataLoader(data, batch_size=4))
    assert _lists(DataLoader(data, batch_size=4, num_workers=2)) == expected
    slow = Slow()
    assert _lists(DataLoader(slow, batch_size=3, num_workers=2, prefetch_factor=1)) == \
        _lists(DataLoader(slow, batch_size=3))


def test_shuffled_workers_match_the_main_process_for_the_same_generator():
    data = TensorDataset(ember.arange(20))
    runs = [_lists(DataLoader(data, batch_size=3, shuffle=True, num_workers=w,
                              generator=ember.Generator().manual_seed(7))) for w in (0, 2)]
    assert runs[0] == runs[1]
    assert sorted(sum((b[0] for b in runs[0]), [])) == list(range(20))


class WorkerSeeds(Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        info = get_worker_info()
        return (info.id, info.seed, info.num_workers, ember.initial_seed(), random.random(),
                float(np.random.random()), float(ember.rand(1).item()), len(info.dataset))


def _seed_rows(loader):
    return [tuple(x.item() if hasattr(x, "item") else x for x in row) for batch in loader
            for row in zip(*[t.tolist() for t in batch])]


def test_worker_seeds_info_and_reproducibility():
    def run(seed):
        return _seed_rows(DataLoader(WorkerSeeds(), batch_size=1, num_workers=2,
                                     generator=ember.Generator().manual_seed(seed)))

    rows = run(0)
    by_worker = {row[0]: row for row in rows}
    assert sorted(by_worker) == [0, 1]
    base = by_worker[0][1]
    assert by_worker[1][1] == base + 1  # seed = base_seed + worker_id
    assert all(row[2] == 2 and row[7] == 4 for row in rows)
    assert all(row[3] == row[1] for row in rows)  # ember's generator seeded with it
    assert by_worker[0][4:7] != by_worker[1][4:7]  # random, NumPy and ember differ across workers
    assert run(0) == rows  # test_worker_seed_reproducibility
    assert run(1) != rows


def test_each_epoch_draws_new_worker_seeds_reproducibly():
    def epochs(persistent):
        loader = DataLoader(WorkerSeeds(), batch_size=1, num_workers=2, persistent_workers=persistent,
                            generator=ember.Generator().manual_seed(3))
        return [_seed_rows(loader), _seed_rows(loader)]

    first, second = epochs(False)
    assert first != second
    assert epochs(False) == [first, second]  # test_multi_epochs_reproducibility


def test_numpy_seed_state_matches_torch():
    for base_seed, worker_id in [(0, 0), (1, 3), (2 ** 32 + 17, 1), (2 ** 63 - 1, 7), (123456789, 15)]:
        assert _generate_state(base_seed, worker_id) == torch_worker._generate_state(base_seed, worker_id)


def test_worker_numpy_stream_is_the_one_torch_gives_for_the_same_base_seed():
    class NumpyDraw(Dataset):
        def __len__(self):
            return 2

        def __getitem__(self, i):
            return np.random.randint(0, 2 ** 31, size=3), get_worker_info().seed - get_worker_info().id

    for xs, base in DataLoader(NumpyDraw(), batch_size=None, num_workers=1):
        state = np.random.RandomState(torch_worker._generate_state(int(base), 0))
        np.testing.assert_array_equal(xs.numpy(), state.randint(0, 2 ** 31, size=3))
        break


def test_worker_init_fn_runs_in_each_worker_after_seeding():
    class Tagged(Dataset):
        def __len__(self):
            return 4

        def __getitem__(self, i):
            return get_worker_info().dataset.tag

    def init(worker_id):
        get_worker_info().dataset.tag = f"worker{worker_id}:{get_worker_info().seed % 1000}"

    loader = DataLoader(Tagged(), batch_size=None, num_workers=2, worker_init_fn=init)
    tags = list(loader)
    assert sorted(set(t.split(":")[0] for t in tags)) == ["worker0", "worker1"]
    assert get_worker_info() is None
    with pytest.raises(RuntimeError, match="Cannot assign attributes to WorkerInfo objects"):
        ember.data.WorkerInfo(id=0).id = 1


class Range(IterableDataset):
    def __init__(self, start, end):
        self.start, self.end = start, end

    def __iter__(self):
        info = get_worker_info()
        if info is None:
            return iter(range(self.start, self.end))
        return iter(range(self.start + info.id, self.end, info.num_workers))


def test_iterable_dataset_sharded_through_worker_info():
    batches = [b.tolist() for b in DataLoader(Range(0, 23), batch_size=4, num_workers=2)]
    flat = sorted(x for b in batches for x in b)
    assert flat == list(range(23))
    # batches alternate between workers while both have data
    assert batches[0] == [0, 2, 4, 6] and batches[1] == [1, 3, 5, 7]
    dropped = [b.tolist() for b in DataLoader(Range(0, 23), batch_size=4, num_workers=2, drop_last=True)]
    assert all(len(b) == 4 for b in dropped)
    unbatched = list(DataLoader(Range(0, 5), batch_size=None, num_workers=2))  # ints stay ints, as in torch
    assert sorted(unbatched) == [0, 1, 2, 3, 4]


def test_persistent_workers_keep_their_processes_across_epochs():
    loader = DataLoader(TensorDataset(ember.arange(10)), batch_size=3, num_workers=2, persistent_workers=True)
    first = _lists(loader)
    pids = [w.pid for w in loader._iterator._workers]
    assert _lists(loader) == first
    assert [w.pid for w in loader._iterator._workers] == pids
    iterator = iter(loader)
    next(iterator)  # a half-read epoch, then a new one
    assert _lists(loader) == first


def test_two_loaders_at_once_are_independent():
    a = iter(DataLoader(TensorDataset(ember.arange(8)), batch_size=2, num_workers=1))
    b = iter(DataLoader(TensorDataset(ember.arange(8) * 10), batch_size=2, num_workers=1))
    pairs = [(x[0].tolist(), y[0].tolist()) for x, y in zip(a, b)]
    assert pairs[0] == ([0, 1], [0, 10]) and len(pairs) == 4


def test_spawn_context_and_invalid_context():
    data = TensorDataset(ember.arange(6))
    loader = DataLoader(data, batch_size=2, num_workers=1, multiprocessing_context="spawn")
    assert _lists(loader) == _lists(DataLoader(data, batch_size=2))
    with pytest.raises(ValueError, match="multiprocessing_context option should specify a valid start method"):
        DataLoader(data, num_workers=1, multiprocessing_context="nope")
    with pytest.raises(ValueError, match="multiprocessing_context can only be used with multi-process loading"):
        DataLoader(data, multiprocessing_context="spawn")


def test_pin_memory_on_cpu_warns_and_passes_batches_through():
    data = TensorDataset(ember.arange(4))
    if ember.cuda.is_available():
        batch = next(iter(DataLoader(data, batch_size=2, pin_memory=True)))
        assert batch[0].is_pinned()
        return
    with pytest.warns(UserWarning, match="no accelerator is found"):
        batches = _lists(DataLoader(data, batch_size=2, pin_memory=True, num_workers=1))
    assert batches == [[[0, 1]], [[2, 3]]]
