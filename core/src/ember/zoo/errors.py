"""``ZooError``: a zoo request that cannot be met (unknown model or dataset, a checkpoint
of another model, an input the model cannot take).

PyTorch counterpart: none as such; torchvision's ``get_model`` raises ``ValueError`` for
an unknown name (torchvision/models/_api.py, v0.28), which is why ``ZooError`` is one,
so code written for torchvision still catches it. The ``ember`` CLI reports it as one
line (ember/cli.py).
"""


class ZooError(ValueError):
    """A zoo model, dataset, checkpoint or input that does not fit the request."""
