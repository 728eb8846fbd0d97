"""Quantized tensors in checkpoints: torch's ``_rebuild_qtensor`` both ways.

PyTorch counterpart: ``_rebuild_qtensor`` in torch/_utils.py and the quantized-tensor
entries of ``_get_allowed_globals`` in torch/_weights_only_unpickler.py (v2.13).

A quantized tensor is pickled as ``torch._utils._rebuild_qtensor(storage, offset, size,
stride, quantizer_params, requires_grad, backward_hooks)``, its storage typed
``torch.QUInt8Storage`` / ``QInt8Storage`` / ``QInt32Storage`` (the raw integers), and
``quantizer_params`` either ``(torch.per_tensor_affine, scale, zero_point)`` or
``(torch.per_channel_affine, scales, zero_points, axis)``. Quantized tensors belong to
the ember-quantization plugin (``ember_quantization.QTensor``); the core imports no
plugin: on load it checks the arguments and hands them to the rebuild function a plugin
registered as the tensor type ``"quantized"`` (the hook ``ember_register_tensor_types``),
naming the distribution when none did. Saving is duck-typed on the ``QTensor`` protocol.
"""

from ember.serialization.errors import CheckpointError, describe

# storage class name -> (little-endian file dtype, ember integer dtype name, quantized dtype name)
QUANTIZED_STORAGES = {
    "QUInt8Storage": ("<u1", "uint8", "quint8"),
    "QInt8Storage": ("<i1", "int8", "qint8"),
    "QInt32Storage": ("<i4", "int32", "qint32"),
}
STORAGE_FOR_QDTYPE = {qdtype: name for name, (_, _, qdtype) in QUANTIZED_STORAGES.items()}
QSCHEMES = ("per_tensor_affine", "per_channel_affine", "per_tensor_symmetric", "per_channel_symmetric")


class QSchemeMarker:
    """``torch.per_tensor_affine`` and friends, as they appear in ``quantizer_params``."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"torch.{self.name}"


class QDtypeMarker:
    """``torch.qint8`` (etc.) loaded as a plain value, e.g. a quantized Linear's ``_packed_params.dtype``."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"torch.{self.name}"


def rebuild_qtensor(rebuild_tensor, storage, storage_offset, size, stride, quantizer_params, requires_grad,
                    backward_hooks):
    """The quantized tensor (ember-quantization's ``QTensor``) over the checkpoint's integers, after checking
    every argument."""
    kind = QUANTIZED_STORAGES.get(getattr(getattr(storage, "storage_type", None), "name", None))
    if kind is None:
        raise CheckpointError(f"_rebuild_qtensor needs a quantized storage, got {describe(storage)}")
    if requires_grad is not False:
        raise CheckpointError("a quantized tensor cannot require grad")
    int_repr = rebuild_tensor(storage, storage_offset, size, stride, False, backward_hooks)
    scale, zero_point, axis = _quantizer(quantizer_params, size)
    return _rebuild_quantized()(int_repr, kind[2], scale, zero_point, axis)


def _rebuild_quantized():
    """The ``rebuild(int_repr, qdtype name, scale, zero_point, axis)`` a plugin registered
    as the tensor type ``"quantized"`` (ember-quantization's)."""
    from ember.plugins import registry

    found = registry.catalogue("tensor_types").get("quantized")
    if found is None:
        from ember.plugins.manager import install_hint

        raise CheckpointError("this checkpoint holds quantized tensors; loading them needs the ember-quantization "
                              f"plugin ({install_hint('ember-quantization')}), which registers the tensor type "
                              "'quantized'")
    return found.obj


def _quantizer(params, size):
    """(scale, zero_point, axis) from ``quantizer_params``, checked against the tensor's size."""
    from ember.tensor import Tensor

    if type(params) is not tuple or not params or type(params[0]) is not QSchemeMarker:
        raise CheckpointError(f"quantizer_params must start with a torch qscheme, got {describe(params)}")
    scheme = params[0].name
    if scheme in ("per_tensor_affine", "per_tensor_symmetric"):
        if len(params) != 3 or type(params[1]) is not float or type(params[2]) is not int:
            raise CheckpointError(f"per-tensor quantizer_params must be (qscheme, float, int), got {describe(params)}")
        return params[1], params[2], None
    if len(params) != 4 or not isinstance(params[1], Tensor) or not isinstance(params[2], Tensor) \
            or type(params[3]) is not int:
        raise CheckpointError("per-channel quantizer_params must be (qscheme, scales, zero_points, axis), got "
                              f"{describe(params)}")
    _, scales, zero_points, axis = params
    if not 0 <= axis < len(size) or scales.numel() != size[axis] or zero_points.numel() != size[axis]:
        raise CheckpointError(f"per-channel quantizer: axis {axis} and {scales.numel()} scales do not fit a tensor "
                              f"of size {tuple(size)}")
    return scales, zero_points, axis


def is_qtensor(obj):
    """Whether ``obj`` follows the plugin's QTensor protocol (the core never imports the class)."""
    return getattr(obj, "is_quantized", False) is True and hasattr(obj, "_int_repr") and hasattr(obj, "qscheme")


def is_qdtype(obj):
    return type(obj).__name__ in ("qdtype", "QDtypeMarker") and getattr(obj, "name", None) in STORAGE_FOR_QDTYPE
