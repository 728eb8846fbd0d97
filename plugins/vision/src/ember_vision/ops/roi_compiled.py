"""roi_align's and roi_pool's compiled cpu backward kernels: the references' backward
with the scatter run by the loops ember-vision's build compiled ahead of time
(``ember_vision._roi_compiled``), registered for "cpu" when that module is there and was
built from today's loops.

PyTorch counterpart: torchvision/csrc/ops/cpu/roi_align_kernel.cpp and
roi_pool_kernel.cpp (``TORCH_LIBRARY_IMPL(torchvision, CPU, m)`` for
``_roi_align_backward`` and ``_roi_pool_backward``) (torchvision 0.28).

The loops add what the references add, in their order (NOTE [ Compiled roi backwards
with the reference's bits ] in roi_loops.py), so the gradients are the references'. The
forwards stay the references'. Without a build the references serve and numba is never
imported.
"""

import os

import numpy as np

from ember import library
from ember_vision.ops.deform_conv2d_build import load_built, source_digest
from ember_vision.ops.roi_align import backward as align_backward
from ember_vision.ops.roi_align import roi_align_backward_op
from ember_vision.ops.roi_pool import backward as pool_backward
from ember_vision.ops.roi_pool import roi_pool_backward_op

MODULE = "ember_vision._roi_compiled"
LOOPS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "roi_loops.py")
FLOATS = (np.float32, np.float64)


def load():
    """The built extension module, or None where it is missing or older than the loops."""
    return load_built(MODULE, source_digest(LOOPS), "roi_loops.py")


def align_backward_with(loop):
    """A ``torchvision::_roi_align_backward`` kernel whose scatter is ``loop(dtype)``, for
    float32 and float64 NumPy arrays; the reference for anything else."""
    def spread(plane, corners, per_bin, grid_h, grid_w):
        rows, cols, weights = (np.stack([corner[i] for corner in corners]) for i in range(3))
        loop(plane.dtype)(plane, rows, cols, weights, np.ascontiguousarray(per_bin), grid_h, grid_w)

    def compiled_roi_align_backward(xp, grad, rois, *, spatial_scale, pooled_height, pooled_width, batch_size,
                                    channels, height, width, sampling_ratio, aligned):
        attrs = dict(spatial_scale=spatial_scale, pooled_height=pooled_height, pooled_width=pooled_width,
                     sampling_ratio=sampling_ratio, aligned=aligned)
        if xp is not np or grad.dtype not in FLOATS:
            return roi_align_backward_op.generic(xp, grad, rois, batch_size=batch_size, channels=channels,
                                                           height=height, width=width, **attrs)
        return align_backward(grad, rois, (batch_size, channels, height, width), attrs, spread)
    return compiled_roi_align_backward


def pool_backward_with(loop):
    """A ``torchvision::_roi_pool_backward`` kernel whose scatter is ``loop(dtype)``, for
    float32 and float64 NumPy arrays; the reference for anything else."""
    def spread(grad_input, grad, boxes, index):
        batch = boxes[:, 0].astype(np.int64)  # as the reference's int(roi[0])
        index = np.ascontiguousarray(index.reshape(len(boxes), grad_input.shape[1], -1 if len(boxes) else 0),
                                     dtype=np.int32)
        grad = np.ascontiguousarray(grad.reshape(index.shape))
        loop(grad.dtype)(grad, batch, index, grad_input)

    def compiled_roi_pool_backward(xp, grad, rois, argmax, **attrs):
        if xp is not np or grad.dtype not in FLOATS:
            return roi_pool_backward_op.generic(xp, grad, rois, argmax, **attrs)
        shape = (attrs["batch_size"], attrs["channels"], attrs["height"], attrs["width"])
        return pool_backward(grad, rois, argmax, shape, spread)
    return compiled_roi_pool_backward


def register():
    """Register the compiled backward kernels for "cpu" if the build is there; returns
    whether they were."""
    module = load()
    if module is None:
        return False
    library.register_kernel(roi_align_backward_op, "cpu",
                            align_backward_with(lambda dtype: getattr(module, f"roi_align_spread_{dtype}")))
    library.register_kernel(roi_pool_backward_op, "cpu",
                            pool_backward_with(lambda dtype: getattr(module, f"roi_pool_spread_{dtype}")))
    return True
