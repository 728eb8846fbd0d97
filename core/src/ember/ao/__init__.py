"""``ember.ao``: torch's "architecture optimization" namespace, the quantization API
that the ember-quantization plugin provides, under torch's paths (``ember.ao.quantization``,
``ember.ao.nn.quantized``, ``ember.ao.nn.quantized.dynamic``, ``ember.ao.nn.qat``,
``ember.ao.nn.intrinsic``).

PyTorch counterpart: torch/ao/__init__.py (v2.13). Each module here forwards to the
plugin (NOTE [ Forwarding modules ]), so a torch program that imports from these paths
runs with the import changed, and the core imports no plugin.
"""

from ember.ao import nn, quantization

__all__ = ["nn", "quantization"]
