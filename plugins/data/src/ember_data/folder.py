"""``DatasetFolder`` and ``ImageFolder``: one sub-folder per class on disk.

PyTorch counterpart: torchvision/datasets/folder.py (v0.28)::

    root/dog/xxx.png
    root/cat/123.png

Classes are the sub-folder names in sorted order (``class_to_idx``); samples are the
files under each (walked recursively, following links, sorted) whose extension is in
``extensions`` (case-insensitive) or for which ``is_valid_file(path)`` is true.
"""

import os

from ember_data.dataset import Dataset

IMG_EXTENSIONS = (".jpg", ".jpeg", ".png", ".ppm", ".bmp", ".pgm", ".tif", ".tiff", ".webp")


def has_file_allowed_extension(filename, extensions):
    return filename.lower().endswith(tuple(e.lower() for e in extensions))


def find_classes(directory):
    """``(classes, class_to_idx)`` from the sub-folders of ``directory``."""
    classes = sorted(entry.name for entry in os.scandir(directory) if entry.is_dir())
    if not classes:
        raise FileNotFoundError(f"Couldn't find any class folder in {directory}.")
    return classes, {name: i for i, name in enumerate(classes)}


def make_dataset(directory, class_to_idx, extensions=None, is_valid_file=None, allow_empty=False):
    """``[(path, class_index)]`` of every valid file, class by class."""
    if (extensions is None) == (is_valid_file is None):
        raise ValueError("Both extensions and is_valid_file cannot be None or not None at the same time")
    if is_valid_file is None:
        def is_valid_file(path):
            return has_file_allowed_extension(path, extensions)
    instances, empty = [], []
    for name in sorted(class_to_idx):
        folder = os.path.join(directory, name)
        found = 0
        for parent, _, files in sorted(os.walk(folder, followlinks=True)):
            for file in sorted(files):
                path = os.path.join(parent, file)
                if is_valid_file(path):
                    instances.append((path, class_to_idx[name]))
                    found += 1
        if not found:
            empty.append(name)
    if empty and not allow_empty:
        message = f"Found no valid file for the classes {', '.join(empty)}. "
        if extensions is not None:
            listed = extensions if isinstance(extensions, str) else ", ".join(extensions)
            message += f"Supported extensions are: {listed}"
        raise FileNotFoundError(message)
    return instances


class DatasetFolder(Dataset):
    """``(loader(path), class_index)`` for every file of the class folders under ``root``."""

    def __init__(self, root, loader, extensions=None, transform=None, target_transform=None, is_valid_file=None,
                 allow_empty=False):
        self.root = os.fspath(root)
        self.classes, self.class_to_idx = find_classes(self.root)
        self.samples = make_dataset(self.root, self.class_to_idx, extensions, is_valid_file, allow_empty)
        self.targets = [target for _, target in self.samples]
        self.loader = loader
        self.extensions = extensions
        self.transform = transform
        self.target_transform = target_transform

    def __getitem__(self, index):
        path, target = self.samples[index]
        sample = self.loader(path)
        if self.transform is not None:
            sample = self.transform(sample)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return sample, target

    def __len__(self):
        return len(self.samples)


def pil_loader(path):
    """The image at ``path`` as an RGB PIL image (decoded now, file closed)."""
    from PIL import Image

    with open(path, "rb") as f:
        return Image.open(f).convert("RGB")


class ImageFolder(DatasetFolder):
    """A ``DatasetFolder`` of images, opened with Pillow as RGB by default."""

    def __init__(self, root, transform=None, target_transform=None, loader=pil_loader, is_valid_file=None,
                 allow_empty=False):
        super().__init__(root, loader, IMG_EXTENSIONS if is_valid_file is None else None, transform=transform,
                         target_transform=target_transform, is_valid_file=is_valid_file, allow_empty=allow_empty)
        self.imgs = self.samples
