"""``ember.onnx``: export a model to ONNX, to run it in onnxruntime or any other ONNX
runtime.

PyTorch counterpart: torch/onnx/__init__.py (v2.13). The ``onnx`` package is an
optional dependency: ``pip install -e 'core[onnx]'`` in a clone (onnx and onnxruntime).
"""

from ember.onnx.registration import register_custom_op_symbolic, unregister_custom_op_symbolic
from ember.onnx.utils import DEFAULT_OPSET, OnnxExporterError, export

__all__ = ["DEFAULT_OPSET", "OnnxExporterError", "export", "register_custom_op_symbolic",
           "unregister_custom_op_symbolic"]
