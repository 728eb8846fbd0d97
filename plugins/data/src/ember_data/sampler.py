"""Samplers: which dataset keys the DataLoader fetches, and in what order.

PyTorch counterpart: torch/utils/data/sampler.py (v2.13).

A sampler is any iterable of keys with (usually) a ``__len__``. ``BatchSampler`` groups
another sampler's keys into lists, and the DataLoader fetches one list per batch.
Random samplers draw from an ``ember.Generator``; without one they make a fresh
generator seeded from ember's default generator at each ``__iter__``, as PyTorch does,
so ``ember.manual_seed`` makes a run repeatable. ember's generator is PyTorch's
Mersenne Twister and the samplers make PyTorch's calls (``randperm``, ``randint`` 32 at a
time, ``multinomial``), so the same seed gives PyTorch's order.
"""

import numpy as np


class Sampler:
    """Base class: subclasses define ``__iter__`` (and ``__len__`` when they know it)."""

    def __init__(self, data_source=None):
        pass

    def __iter__(self):
        raise NotImplementedError


class SequentialSampler(Sampler):
    """``0, 1, ..., len(data_source) - 1``."""

    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)


def _fresh_generator(generator):
    """``generator``, or a new one seeded with one 64-bit draw from ember's default
    generator (PyTorch's ``torch.empty((), dtype=torch.int64).random_()``)."""
    if generator is not None:
        return generator
    import ember

    return ember.Generator().manual_seed(int(ember.empty((), dtype=ember.int64).random_().item()))


class RandomSampler(Sampler):
    """A random permutation, or ``num_samples`` draws with replacement.

    Without replacement and with ``num_samples > len(data_source)``, whole permutations
    are chained and the last one cut short.
    """

    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(self.replacement, bool):
            raise TypeError(f"replacement should be a boolean value, but got replacement={self.replacement}")
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got "
                             f"num_samples={self.num_samples}")

    @property
    def num_samples(self):
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        import ember

        n = len(self.data_source)
        generator = _fresh_generator(self.generator)
        if self.replacement:
            # Drawn 32 at a time, as PyTorch does: the same numbers, and a huge
            # num_samples never builds every index up front.
            for _ in range(self.num_samples // 32):
                yield from ember.randint(high=n, size=(32,), generator=generator).tolist()
            yield from ember.randint(high=n, size=(self.num_samples % 32,), generator=generator).tolist()
            return
        for _ in range(self.num_samples // n):
            yield from ember.randperm(n, generator=generator).tolist()
        yield from ember.randperm(n, generator=generator).tolist()[:self.num_samples % n]

    def __len__(self):
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given ``indices`` in a random order."""

    def __init__(self, indices, generator=None):
        self.indices = indices
        self.generator = generator

    def __iter__(self):
        import ember

        for i in ember.randperm(len(self.indices), generator=self.generator).tolist():
            yield self.indices[i]

    def __len__(self):
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """``num_samples`` keys drawn with probabilities proportional to ``weights``."""

    def __init__(self, weights, num_samples, replacement=True, generator=None):
        if not isinstance(num_samples, int) or isinstance(num_samples, bool) or num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={num_samples}")
        if not isinstance(replacement, bool):
            raise ValueError(f"replacement should be a boolean value, but got replacement={replacement}")
        weights = np.asarray(_as_numpy(weights), dtype=np.float64)
        if weights.ndim != 1:
            raise ValueError(f"weights should be a 1d sequence but given weights have shape {tuple(weights.shape)}")
        self.weights = weights
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self):
        weights = self.weights
        if (weights < 0).any() or not np.isfinite(weights).all():
            raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
        if weights.sum() <= 0:
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
        if not self.replacement and self.num_samples > len(weights):
            raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
        import ember

        # PyTorch's sampler is one torch.multinomial call on the float64 weights.
        keys = ember.multinomial(ember.tensor(weights), self.num_samples, self.replacement, generator=self.generator)
        yield from keys.tolist()

    def __len__(self):
        return self.num_samples


class BatchSampler(Sampler):
    """Groups another sampler's keys into lists of ``batch_size``; the last, shorter
    list is kept unless ``drop_last``."""

    def __init__(self, sampler, batch_size, drop_last):
        if (not isinstance(batch_size, int) or isinstance(batch_size, bool)
                or batch_size <= 0):
            raise ValueError(f"batch_size should be a positive integer value, but got "
                             f"batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got "
                             f"drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self):
        batch = []
        for key in self.sampler:
            batch.append(key)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self):
        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size


def _as_numpy(values):
    from ember.tensor import Tensor

    return values.numpy() if isinstance(values, Tensor) else values


__all__ = ["Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler", "WeightedRandomSampler",
           "BatchSampler"]
