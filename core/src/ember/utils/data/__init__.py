"""``ember.utils.data``: the same names as ``ember.data``, for code written against
``torch.utils.data``; its submodules (``dataloader``, ``sampler``, ``dataset``,
``distributed``) are the ember-data modules under torch's paths.

PyTorch counterpart: torch/utils/data/__init__.py (v2.13).
"""


def __getattr__(name):
    if name.startswith("__"):  # dunder probes (hasattr(m, "__wrapped__"), copy, pickle) never reach the registry
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import ember.data

    return getattr(ember.data, name)


def __dir__():
    import ember.data

    return dir(ember.data)
