"""ONNX conversions registered from outside the core: ``register_custom_op_symbolic``,
how a plugin's op (``torchvision::deform_conv2d``) becomes ONNX nodes.

PyTorch counterpart: torch/onnx/_internal/torchscript_exporter/utils.py
(``register_custom_op_symbolic``, ``unregister_custom_op_symbolic``, exported by
torch/onnx/__init__.py) and torch/onnx/_internal/torchscript_exporter/registration.py (a
symbolic per name and opset) (v2.13). torchvision registers its ops' symbolics this way when
``torchvision.ops`` is imported (torchvision/ops/_register_onnx_ops.py); an ember plugin
does the same when its op module is imported, which a traced model that calls the op
has done before export.

A symbolic function here has the core's form, ``fn(g, node)`` (ember/onnx/symbolic_opset.py):
``g`` is the ``GraphContext``, ``node`` the traced call (``node.args``, ``node.kwargs``).
A registration for opset ``v`` serves every export at opset ``v`` or later, until one for
a later opset takes over; it comes before the core's own table, so a plugin may also
replace how a core op is written.
"""

import re

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*::[A-Za-z_][A-Za-z0-9_.]*$")
_REGISTERED = {}  # "namespace::name" -> {opset version: symbolic function}


def register_custom_op_symbolic(symbolic_name, symbolic_fn, opset_version):
    """Write op ``symbolic_name`` (``"namespace::name"``) into ONNX with
    ``symbolic_fn(g, node)`` when exporting at ``opset_version`` or later."""
    if not isinstance(symbolic_name, str) or not _NAME.match(symbolic_name):
        raise ValueError(f"Failed to register operator {symbolic_name}. The symbolic name must match the format "
                         "domain::name, and should start with a letter and contain only alphanumerical characters")
    if not callable(symbolic_fn):
        raise TypeError(f"symbolic_fn must be callable, got {type(symbolic_fn).__name__}")
    _REGISTERED.setdefault(symbolic_name, {})[int(opset_version)] = symbolic_fn


def unregister_custom_op_symbolic(symbolic_name, opset_version):
    """Remove what ``register_custom_op_symbolic`` registered for this name and opset."""
    versions = _REGISTERED.get(symbolic_name, {})
    versions.pop(int(opset_version), None)
    if not versions:
        _REGISTERED.pop(symbolic_name, None)


def custom_symbolic(qualname, opset_version):
    """The registered symbolic for ``qualname`` at ``opset_version`` (that of the latest
    opset not after it), or None."""
    versions = [v for v in _REGISTERED.get(qualname, ()) if v <= opset_version]
    return _REGISTERED[qualname][max(versions)] if versions else None


def first_opset(qualname):
    """The earliest opset any registered symbolic for ``qualname`` serves, or None."""
    versions = _REGISTERED.get(qualname)
    return min(versions) if versions else None
