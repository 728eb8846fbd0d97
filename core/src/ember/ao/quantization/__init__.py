"""``ember.ao.quantization``: ember_quantization's API (prepare, convert,
quantize_dynamic, observers, QConfig, stubs, fuse_modules) under torch's path.

PyTorch counterpart: torch/ao/quantization/__init__.py (v2.13).
"""

from ember.plugins.forwarding import forwarder

__getattr__, __dir__ = forwarder(__name__)  # NOTE [ Forwarding modules ]

