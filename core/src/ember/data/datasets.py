"""``ember.data.datasets``: every registered dataset's builder by name, and the rest of the
module the ember-data plugin registers as "datasets" (``from ember.data.datasets import ...``).

PyTorch counterpart: torchvision/datasets/__init__.py (v0.28).
"""

from ember.plugins.forwarding import forwarder

__getattr__, __dir__ = forwarder(__name__)  # NOTE [ Forwarding modules ]
