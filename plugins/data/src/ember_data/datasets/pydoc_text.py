"""``pydoc-text``: Python's own help topics (``pydoc_data.topics``) as characters.

PyTorch counterpart: none; the Tiny-Shakespeare set of char-rnn / minGPT, replaced by
text every CPython ships (about 465 K characters, PSF licence), so nothing downloads.

The topics are joined in sorted-key order; the first ``1 - test_fraction`` of the text
is "train", the rest "test". A sample is ``(x, y)``: ``block_size`` character ids
starting at ``index``, and the same shifted by one (the next-character targets). The
vocabulary is every character of the whole text, so both splits share it.
"""

import numpy as np

from ember_data.dataset import Dataset


def load_text():
    """The joined help topics."""
    from pydoc_data.topics import topics

    return "\n\n".join(topics[key] for key in sorted(topics))


class PydocText(Dataset):
    """Character-level language-model windows over the pydoc topics."""

    def __init__(self, split="train", seed=0, block_size=128, test_fraction=0.1):
        text = load_text()
        self.vocab = sorted(set(text))
        self.stoi = {ch: i for i, ch in enumerate(self.vocab)}
        ids = np.array([self.stoi[ch] for ch in text], dtype=np.int64)
        cut = int(len(ids) * (1 - test_fraction))
        if split == "train":
            self.ids = ids[:cut]
        elif split == "test":
            self.ids = ids[cut:]
        else:
            raise ValueError(f"split must be 'train' or 'test', but got {split!r}")
        self.block_size = block_size
        self.split = split
        self.seed = seed  # the text is fixed; kept for the common load_dataset signature

    @property
    def vocab_size(self):
        return len(self.vocab)

    def encode(self, text):
        return [self.stoi[ch] for ch in text]

    def decode(self, ids):
        return "".join(self.vocab[int(i)] for i in ids)

    def __len__(self):
        return max(len(self.ids) - self.block_size, 0)

    def __getitem__(self, index):
        import ember

        if not -len(self) <= index < len(self):
            raise IndexError(f"index {index} is out of range for a dataset of {len(self)} windows")
        index %= len(self)
        window = self.ids[index:index + self.block_size + 1]
        return ember.from_numpy(window[:-1]), ember.from_numpy(window[1:])
