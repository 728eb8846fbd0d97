"""The module-level ``__getattr__`` / ``__dir__`` of the ``ember.utils.data.<name>``
submodules: each forwards to the ember-data module that holds the code, or names the
distribution to install when ember-data is missing.

PyTorch counterpart: none (torch/utils/data/ holds the code itself) (v2.13).
"""

import importlib


def forward(target, name):
    """``(__getattr__, __dir__)`` for the module ``name`` reading from ``target``."""
    def load():
        try:
            return importlib.import_module(target)
        except ImportError as exc:
            raise ImportError(f"{name} is provided by the ember-data distribution ({target}), which is not "
                              f"installed: pip install ember-data") from exc

    def __getattr__(attribute):
        if attribute.startswith("__"):
            raise AttributeError(f"module {name!r} has no attribute {attribute!r}")
        try:
            return getattr(load(), attribute)
        except AttributeError:
            raise AttributeError(f"module {name!r} has no attribute {attribute!r}") from None

    def __dir__():
        return sorted(set(dir(load())))

    return __getattr__, __dir__
