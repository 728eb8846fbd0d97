"""Samplers: which dataset keys the DataLoader fetches, and in what order.

PyTorch counterpart: torch/utils/data/sampler.py (v2.13).

A sampler is any iterable of keys with (usually) a ``__len__``. ``BatchSampler`` groups
another sampler's keys into lists, and the DataLoader fetches one list per batch.
Random samplers draw from an ``ember.Generator``; without one they make a fresh
generator seeded from ember's default generator at each ``__iter__``, as PyTorch does,
so ``ember.manual_seed`` makes a run repeatable. ember's generator is NumPy's PCG64,
not PyTorch's Mersenne Twister: the same seed gives a different (equally valid) order.
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
    """``generator``, or a new one seeded from ember's default generator."""
    if generator is not None:
        return generator
    from ember.random import Generator, default_generator

    return Generator().manual_seed(int(default_generator.numpy.integers(0, 2 ** 63)))


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
        n = len(self.data_source)
        rng = _fresh_generator(self.generator).numpy
        if self.replacement:
            yield from rng.integers(0, n, size=self.num_samples).tolist()
            return
        for _ in range(self.num_samples // n):
            yield from rng.permutation(n).tolist()
        yield from rng.permutation(n)[:self.num_samples % n].tolist()

    def __len__(self):
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given ``indices`` in a random order."""

    def __init__(self, indices, generator=None):
        self.indices = indices
        self.generator = generator

    def __iter__(self):
        rng = _fresh_generator(self.generator).numpy
        for i in rng.permutation(len(self.indices)).tolist():
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
        rng = _fresh_generator(self.generator).numpy
        probabilities = weights / weights.sum()
        if self.replacement:
            yield from rng.choice(len(weights), size=self.num_samples, p=probabilities).tolist()
            return
        # Without replacement, PyTorch's multinomial takes the zero-weight keys last
        # once the others are used up.
        positive = int(np.count_nonzero(weights))
        yield from rng.choice(len(weights), size=min(self.num_samples, positive), replace=False,
                              p=probabilities).tolist()
        if self.num_samples > positive:
            zeros = np.flatnonzero(weights == 0)
            yield from rng.permutation(zeros)[:self.num_samples - positive].tolist()

    def __len__(self):
        return self.num_samples


class BatchSampler(Sampler):
    """Groups another sampler's keys into lists of ``batch_size``; the last, shorter
    list is kept unless ``drop_last``."""

    def __init__(self, sampler, batch_size, drop_last):
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError(f"batch_size should be a positive integer value, but got batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
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
