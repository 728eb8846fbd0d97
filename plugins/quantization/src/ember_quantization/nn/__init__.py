"""ember_quantization.nn: quantized (``quantized``, ``quantized.dynamic``), fused (``intrinsic``) and QAT modules.

PyTorch counterpart: torch/ao/nn/__init__.py (v2.13).
"""
