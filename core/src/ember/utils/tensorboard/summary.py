"""The summaries a ``SummaryWriter`` writes, as TensorBoard's protocol buffers: scalars,
histograms, images, text and hyperparameters.

PyTorch counterpart: torch/utils/tensorboard/summary.py (v2.13). The protos and the
event-file format are the ``tensorboard`` package's own (``tensorboard.compat.proto``),
so TensorBoard and its event reader read what ember writes.
"""

import io

import numpy as np


def as_numpy(value):
    """A tensor (ember's, or anything with ``numpy()``), an array or a number as an array."""
    if hasattr(value, "detach"):
        value = value.detach()
    if hasattr(value, "numpy"):
        value = value.numpy()
    return np.asarray(value)


def scalar(tag, value):
    from tensorboard.compat.proto.summary_pb2 import Summary

    array = as_numpy(value).squeeze()
    if array.ndim != 0:
        raise AssertionError(f"Tensor should contain one element (0 dimensions). Was given size: {array.size} "
                             f"and {array.ndim} dimensions.")
    return Summary(value=[Summary.Value(tag=tag, simple_value=float(array))])


def _default_bins():
    # TensorBoard's buckets: +-1e-12 growing by 10% to 1e20, and 0 between them.
    edges, v = [], 1e-12
    while v < 1e20:
        edges.append(v)
        v *= 1.1
    return [-e for e in reversed(edges)] + [0.0] + edges


def histogram(tag, values, bins="tensorflow", max_bins=None):
    """A histogram of ``values``: its min, max, count, sum, sum of squares and the
    counts of the non-empty stretch of buckets (each bucket named by its right edge)."""
    from tensorboard.compat.proto.summary_pb2 import HistogramProto, Summary

    flat = as_numpy(values).astype(np.float64).reshape(-1)
    if flat.size == 0:
        raise ValueError("The input has no element.")
    counts, edges = np.histogram(flat, bins=_default_bins() if bins == "tensorflow" else bins)
    if max_bins is not None and len(counts) > max_bins:
        group = -(-len(counts) // max_bins)
        counts = np.add.reduceat(counts, np.arange(0, len(counts), group))
        edges = np.append(edges[:-1:group], edges[-1])
    used = np.flatnonzero(counts)
    first, last = used[0], used[-1]
    return Summary(value=[Summary.Value(tag=tag, histo=HistogramProto(
        min=float(flat.min()), max=float(flat.max()), num=float(flat.size), sum=float(flat.sum()),
        sum_squares=float(flat.dot(flat)), bucket_limit=edges[first + 1:last + 2].tolist(),
        bucket=counts[first:last + 1].astype(float).tolist()))])


def _to_hwc(array, dataformats):
    """An image in CHW/HWC/HW (or NCHW/NHWC for a batch, tiled in a grid) as HWC."""
    dataformats = dataformats.upper()
    if dataformats in ("NCHW", "NHWC"):
        if dataformats == "NCHW":
            array = array.transpose(0, 2, 3, 1)
        n, h, w, c = array.shape
        columns = int(np.ceil(np.sqrt(n)))
        rows = int(np.ceil(n / columns))
        grid = np.zeros((rows * h, columns * w, c), array.dtype)
        for i in range(n):
            r, k = divmod(i, columns)
            grid[r * h:(r + 1) * h, k * w:(k + 1) * w] = array[i]
        return grid
    if dataformats == "CHW":
        return array.transpose(1, 2, 0)
    if dataformats == "HW":
        return array[:, :, None]
    if dataformats == "HWC":
        return array
    raise ValueError(f"dataformats must be one of CHW, HWC, HW, NCHW, NHWC; got {dataformats!r}")


def image(tag, value, dataformats="CHW"):
    """An image as a PNG: float values in [0, 1] are scaled to 0-255, as torch's."""
    from PIL import Image
    from tensorboard.compat.proto.summary_pb2 import Summary

    array = _to_hwc(as_numpy(value), dataformats)
    if array.dtype != np.uint8:
        array = (array * 255.0).clip(0, 255).astype(np.uint8)
    if array.shape[2] == 1:
        array = np.repeat(array, 3, axis=2)
    buffer = io.BytesIO()
    Image.fromarray(array).save(buffer, format="PNG")
    h, w, c = array.shape
    return Summary(value=[Summary.Value(tag=tag, image=Summary.Image(
        height=h, width=w, colorspace=c, encoded_image_string=buffer.getvalue()))])


def text(tag, text_string):
    from tensorboard.compat.proto.summary_pb2 import Summary, SummaryMetadata
    from tensorboard.compat.proto.tensor_pb2 import TensorProto
    from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto

    metadata = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name="text"))
    tensor = TensorProto(dtype="DT_STRING", string_val=[text_string.encode("utf-8")],
                         tensor_shape=TensorShapeProto(dim=[TensorShapeProto.Dim(size=1)]))
    return Summary(value=[Summary.Value(tag=tag + "/text_summary", metadata=metadata, tensor=tensor)])


def hparams(hparam_dict):
    """The session-start summary of TensorBoard's hparams plugin, holding the values."""
    from tensorboard.plugins.hparams import summary_v2

    values = {k: v if isinstance(v, (bool, int, float, str)) else str(v) for k, v in hparam_dict.items()}
    return summary_v2.hparams_pb(values)
