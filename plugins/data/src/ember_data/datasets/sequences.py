"""``copy``, ``reverse``, ``sort`` and ``add``: toy sequence tasks for Transformers.

PyTorch counterpart: none; the tasks of the Annotated Transformer (copy) and of
minGPT's demos (sort, adder). Each sample is ``(source, target)``, two int64 tensors
of symbols ``0 .. num_symbols-1``; the whole split is drawn up front from
``(seed, split, task)`` (a few hundred KB).

- copy: target = source.        - reverse: target = source reversed.
- sort: target = source sorted.
- add: source = the ``ndigits`` digits of a, then of b (most significant first,
  zero-padded); target = the ``ndigits + 1`` digits of a + b, least significant first
  (reversed, as minGPT's adder: the model then writes the carry last).
"""

import numpy as np

from ember_data.dataset import Dataset

TASKS = ("copy", "reverse", "sort", "add")
_SPLITS = {"train": 0, "test": 1, "val": 2}


class SequenceTask(Dataset):
    """``num_samples`` pairs ``(source, target)`` of the chosen ``task``."""

    def __init__(self, task, split="train", seed=0, length=8, num_symbols=10, ndigits=2, num_samples=None):
        if task not in TASKS:
            raise ValueError(f"task must be one of {TASKS}, but got {task!r}")
        if split not in _SPLITS:
            raise ValueError(f"split must be one of {sorted(_SPLITS)}, but got {split!r}")
        self.task, self.split, self.seed = task, split, seed
        self.num_samples = num_samples if num_samples is not None else (10000 if split == "train" else 1000)
        rng = np.random.default_rng([seed, _SPLITS[split], TASKS.index(task)])
        if task == "add":
            self.num_symbols = 10
            self.source, self.target = _addition(rng, self.num_samples, ndigits)
        else:
            self.num_symbols = num_symbols
            self.source = rng.integers(0, num_symbols, size=(self.num_samples, length), dtype=np.int64)
            self.target = {"copy": lambda s: s.copy(), "reverse": lambda s: s[:, ::-1].copy(),
                           "sort": lambda s: np.sort(s, axis=1)}[task](self.source)

    def __len__(self):
        return self.num_samples

    def __getitem__(self, index):
        import ember

        return ember.from_numpy(self.source[index]), ember.from_numpy(self.target[index])


def _digits(values, width):
    """Decimal digits of ``values``, most significant first, zero-padded to ``width``."""
    powers = 10 ** np.arange(width - 1, -1, -1)
    return (values[:, None] // powers) % 10


def _addition(rng, n, ndigits):
    a = rng.integers(0, 10 ** ndigits, size=n)
    b = rng.integers(0, 10 ** ndigits, size=n)
    source = np.concatenate([_digits(a, ndigits), _digits(b, ndigits)], axis=1)
    target = _digits(a + b, ndigits + 1)[:, ::-1]
    return source.astype(np.int64), np.ascontiguousarray(target, dtype=np.int64)
