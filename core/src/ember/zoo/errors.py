"""``ZooError``: a zoo request that cannot be met (unknown model or dataset, a checkpoint
of another model, an input the model cannot take).

PyTorch counterpart: none as such; torchvision's ``get_model`` raises ``ValueError`` for
an unknown name (torchvision/models/_api.py, v0.28), which is why ``ZooError`` is one,
so code written for torchvision still catches it. The ``ember`` CLI reports it as one
line (ember/cli.py).
"""


class ZooError(ValueError):
    """A zoo model, dataset, checkpoint or input that does not fit the request."""


class UnknownModelError(ZooError, KeyError):
    """No model is registered under the name; a ``KeyError`` too, as the registry is a mapping."""

    def __str__(self):  # KeyError's str would quote the message
        return str(self.args[0]) if self.args else ""
