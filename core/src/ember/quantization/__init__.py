"""``ember.quantization``: the legacy path of ``ember.ao.quantization``, as
``torch.quantization`` is of ``torch.ao.quantization``.

PyTorch counterpart: torch/quantization/__init__.py (v2.13).
"""

from ember.plugins.forwarding import forwarder

__getattr__, __dir__ = forwarder(__name__)  # NOTE [ Forwarding modules ]
