"""DataLoader throughput decoding PNG images: ember's DataLoader against PyTorch's, on the
same files with the same decode function, with 0 and 2 worker processes.

Run through bench/run.py, or alone: ``python bench/dataloader.py 1``. Writes 384 RGB
PNGs of 64x64 into a temporary folder; one "epoch" reads them all in batches of 32
(each epoch starts its workers, as a non-persistent loader does). The figure is seconds
per epoch; the ratio is ember / torch (below 1.0: ember is faster).
"""

import json
import sys
import tempfile

NUM_IMAGES, SIZE, BATCH = 384, 64, 32


def write_images(folder):
    import numpy as np
    from PIL import Image

    rng = np.random.default_rng(0)
    paths = []
    for i in range(NUM_IMAGES):
        # smooth gradients plus noise: compressible like a photo, not like flat colour
        base = np.linspace(0, 255, SIZE, dtype=np.float32)[None, :, None] * rng.random(3, dtype=np.float32)
        pixels = np.clip(base + rng.normal(0, 12, (SIZE, SIZE, 3)), 0, 255).astype(np.uint8)
        path = f"{folder}/{i:04d}.png"
        Image.fromarray(pixels, "RGB").save(path)
        paths.append(path)
    return paths


def decode(path):
    """PNG -> float32 CHW array in [0, 1] (the work both loaders do per sample)."""
    import numpy as np
    from PIL import Image

    with Image.open(path) as image:
        pixels = np.asarray(image.convert("RGB"), dtype=np.float32)
    return np.ascontiguousarray(pixels.transpose(2, 0, 1)) / np.float32(255.0)


class Files:
    """Map-style dataset over the files; the same class body serves both libraries."""

    def __init__(self, paths):
        self.paths = paths

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, i):
        return decode(self.paths[i]), i % 10


def epoch(loader_cls, dataset, workers):
    def run():
        count = 0
        for images, _labels in loader_cls(dataset, batch_size=BATCH, shuffle=False, num_workers=workers):
            count += images.shape[0]
        assert count == NUM_IMAGES
    return run


def main(threads):
    from common import interleaved, pin_threads

    pin_threads(threads)
    import torch.utils.data as tud

    import ember

    ember_dataset = type("EmberFiles", (ember.data.Dataset,), dict(vars(Files)))
    torch_dataset = type("TorchFiles", (tud.Dataset,), dict(vars(Files)))
    with tempfile.TemporaryDirectory() as folder:
        paths = write_images(folder)
        for workers in (0, 2):
            times = interleaved({"ember": epoch(ember.data.DataLoader, ember_dataset(paths), workers),
                                 "torch": epoch(tud.DataLoader, torch_dataset(paths), workers)},
                                rounds=7, inner=1)
            print(json.dumps({"benchmark": f"DataLoader {NUM_IMAGES} PNGs, {workers} workers s/epoch",
                              "ember": times["ember"], "torch": times["torch"],
                              "ratio": times["ember"] / times["torch"],
                              "images/s": {"ember": NUM_IMAGES / times["ember"],
                                           "torch": NUM_IMAGES / times["torch"]}}))


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1)
