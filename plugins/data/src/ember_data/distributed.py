"""``DistributedSampler``: each of ``num_replicas`` processes reads its own share.

PyTorch counterpart: torch/utils/data/distributed.py (v2.13). ``num_replicas`` and
``rank`` default to those of ember.distributed's default process group; before
``init_process_group`` they fall back to the ``WORLD_SIZE`` and ``RANK`` environment
variables (which ``ember run`` and torchrun set), where torch would raise.

The keys (shuffled by ``ember.randperm`` with a generator seeded ``seed + epoch``,
the same permutation as torch's) are padded by
repeating from the start until they divide evenly, or cut when ``drop_last``; replica
``rank`` then takes every ``num_replicas``-th key from position ``rank``. Every
replica therefore sees the same number of samples, and call ``set_epoch`` before each
epoch so the shuffle changes.
"""

import math
import os

from ember_data.sampler import Sampler


class DistributedSampler(Sampler):
    """The share of ``dataset`` that replica ``rank`` of ``num_replicas`` reads."""

    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0, drop_last=False):
        if num_replicas is None:
            num_replicas = _from_environment("WORLD_SIZE")
        if rank is None:
            rank = _from_environment("RANK")
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        if drop_last and len(dataset) % num_replicas != 0:
            # Cut to the largest multiple of num_replicas, so no replica gets padding.
            self.num_samples = math.ceil((len(dataset) - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(len(dataset) / num_replicas)
        self.total_size = self.num_samples * num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self):
        if self.shuffle:
            import ember

            # torch.randperm with a generator seeded by seed + epoch: PyTorch's order.
            generator = ember.Generator().manual_seed(self.seed + self.epoch)
            indices = ember.randperm(len(self.dataset), generator=generator).tolist()
        else:
            indices = list(range(len(self.dataset)))
        if self.drop_last:
            indices = indices[:self.total_size]
        else:
            padding = self.total_size - len(indices)
            repeats = math.ceil(padding / len(indices)) if indices else 0
            indices += (indices * repeats)[:padding]
        assert len(indices) == self.total_size
        own = indices[self.rank:self.total_size:self.num_replicas]
        assert len(own) == self.num_samples
        return iter(own)

    def __len__(self):
        return self.num_samples

    def set_epoch(self, epoch):
        """Use a different shuffle for ``epoch`` (every replica must pass the same value)."""
        self.epoch = epoch


def _from_environment(variable):
    from ember import distributed as dist

    if dist.is_initialized():
        return dist.get_world_size() if variable == "WORLD_SIZE" else dist.get_rank()
    value = os.environ.get(variable)
    if value is None:
        raise RuntimeError(f"DistributedSampler needs num_replicas and rank: pass them, call "
                           f"ember.distributed.init_process_group, or set {variable}")
    return int(value)


__all__ = ["DistributedSampler"]
