"""The ``language-model`` task as char-rnn trains: each epoch is a fixed number of text
windows drawn at random with replacement, and evaluation reads evenly spaced windows of
the held-out text.

PyTorch counterpart: torch/utils/data/sampler.py (v2.13): ``RandomSampler(replacement=True,
num_samples=...)`` is what a PyTorch char-LM script uses for the same purpose. With
``pydoc-text`` every character offset is a window (about 420,000), so an epoch over all
of them would take hours on a CPU; a sampled epoch keeps ``ember train`` to minutes.
"""

import numpy as np

import ember
from ember_zoo_transformer.tasks import LanguageModelTask


class SampledLanguageModelTask(LanguageModelTask):
    """``LanguageModelTask`` whose training epoch is ``windows_per_epoch`` random windows
    (with replacement) and whose evaluation uses ``eval_windows`` evenly spaced windows.
    Sequence tasks (``sort``, ``reverse``) are passed to ``LanguageModelTask`` unchanged."""

    def __init__(self, windows_per_epoch=6400, eval_windows=1024):
        self.windows_per_epoch = windows_per_epoch
        self.eval_windows = eval_windows

    def loader(self, dataset, batch_size, train, workers=0, seed=0):
        if hasattr(dataset, "num_symbols"):
            return super().loader(dataset, batch_size, train, workers, seed)
        if train:
            sampler = ember.data.RandomSampler(dataset, replacement=True, num_samples=self.windows_per_epoch,
                                               generator=ember.Generator().manual_seed(seed))
            return ember.data.DataLoader(dataset, batch_size=batch_size, sampler=sampler, num_workers=workers)
        count = min(self.eval_windows, len(dataset))
        windows = ember.data.Subset(dataset, np.linspace(0, len(dataset) - 1, count).astype(int).tolist())
        return ember.data.DataLoader(windows, batch_size=batch_size, shuffle=False, num_workers=workers)
