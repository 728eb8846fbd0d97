"""``ember_vision.ops``: the counterpart of ``torchvision.ops``.

PyTorch counterpart: torchvision/ops/__init__.py (torchvision 0.28).
"""

# the ember.dispatcher.Op objects the plugin registers (ember.ops.torchvision.<name>)
OPS = ()
