"""``digits``: the UCI "Optical Recognition of Handwritten Digits" set, 1,797 8x8 images.

PyTorch counterpart: none in torch; the loader of scikit-learn's ``load_digits``, whose
copy of the data ships here (data/digits.csv.gz, 57 KB; attribution in data/README.md:
E. Alpaydin and C. Kaynak, UCI Machine Learning Repository, CC BY 4.0).
"""

import gzip
import pathlib

import numpy as np

from ember_data.dataset import Dataset

DATA_FILE = pathlib.Path(__file__).parent / "data" / "digits.csv.gz"


def load_digits():
    """``(images, labels)``: float32 (1797, 64) in [0, 1] and int64 (1797,)."""
    with gzip.open(DATA_FILE, "rt") as f:
        table = np.loadtxt(f, delimiter=",", dtype=np.float32)
    return table[:, :-1] / 16.0, table[:, -1].astype(np.int64)


class Digits(Dataset):
    """The digits as ``(image, label)``: a float32 tensor (1, 8, 8) in [0, 1] and an int.

    ``split`` is "train" (80 %), "test" (20 %) or "all"; the split is a permutation
    drawn from ``seed``. ``data`` and ``targets`` hold the split as NumPy arrays, for
    full-batch use. ``transform`` receives the (1, 8, 8) tensor.
    """

    classes = [str(d) for d in range(10)]

    def __init__(self, split="train", seed=0, test_fraction=0.2, transform=None):
        images, labels = load_digits()
        order = np.random.default_rng(seed).permutation(len(labels))
        n_test = int(len(labels) * test_fraction)
        chosen = {"train": order[n_test:], "test": order[:n_test], "all": np.arange(len(labels))}.get(split)
        if chosen is None:
            raise ValueError(f"split must be 'train', 'test' or 'all', but got {split!r}")
        self.data = images[chosen].reshape(-1, 1, 8, 8)
        self.targets = labels[chosen]
        self.transform = transform
        self.split = split  # (ember train and eval name the split they validate on)

    def __len__(self):
        return len(self.targets)

    def __getitem__(self, index):
        import ember

        image = ember.from_numpy(self.data[index])
        if self.transform is not None:
            image = self.transform(image)
        return image, int(self.targets[index])
