"""Read IDX files, the format of MNIST and Fashion-MNIST (``.gz`` or not).

PyTorch counterpart: ``read_image_file`` / ``read_label_file`` in
torchvision/datasets/mnist.py (v0.28). Debian's ``dataset-fashion-mnist`` package
installs such files.

Layout: two zero bytes, a type code, the number of dimensions ``n``, then ``n``
big-endian uint32 sizes, then the data, big-endian.
"""

import gzip

import numpy as np

_TYPES = {0x08: ">u1", 0x09: ">i1", 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}


def read_idx(path):
    """The array stored in the IDX file at ``path``, in native byte order."""
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rb") as f:
        raw = f.read()
    if len(raw) < 4 or raw[0] != 0 or raw[1] != 0 or raw[2] not in _TYPES:
        raise ValueError(f"{path} is not an IDX file (bad magic number)")
    ndim = raw[3]
    shape = tuple(np.frombuffer(raw, dtype=">u4", count=ndim, offset=4).tolist())
    dtype = np.dtype(_TYPES[raw[2]])
    data = np.frombuffer(raw, dtype=dtype, offset=4 + 4 * ndim)
    if data.size != int(np.prod(shape)):
        raise ValueError(f"{path}: header says shape {shape} but holds {data.size} values")
    return data.reshape(shape).astype(dtype.newbyteorder("="))
