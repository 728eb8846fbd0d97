"""``ember.data``: datasets, samplers, the DataLoader and transforms, found by name.

PyTorch counterpart: torch/utils/data/__init__.py (v2.13). The data pipeline lives in
the ember-data distribution (``ember_data``); ``ember.data.DataLoader`` looks the name
up in the "data" catalogue that plugins fill through ``ember_register_data``, so a
third-party sampler or dataset is reachable here too. When ember-data is missing, a
name it provides raises an AttributeError that says which distribution to install.
"""

DISTRIBUTION = "ember-data"

# What ember-data registers, for the "not installed" message (ember_data/__init__.py has the list).
FIRST_PARTY = frozenset((
    "Dataset", "IterableDataset", "TensorDataset", "StackDataset", "ConcatDataset", "ChainDataset", "Subset",
    "random_split", "Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler",
    "WeightedRandomSampler", "BatchSampler", "DistributedSampler", "DataLoader", "default_collate",
    "default_convert", "get_worker_info", "WorkerInfo", "DatasetFolder", "ImageFolder", "read_idx",
    "load_dataset", "list_datasets", "transforms", "datasets",
))
_PROVIDED_BY = dict.fromkeys(FIRST_PARTY, DISTRIBUTION)


# Registered modules that also exist here as forwarding submodules, so that
# ``from ember.data.transforms import Compose`` works as an import statement.
_SUBMODULES = ("transforms", "datasets")


def __getattr__(name):
    if name.startswith("__"):  # dunder probes (hasattr(m, "__wrapped__"), copy, pickle) never reach the registry
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    if name in _SUBMODULES:
        import importlib

        return importlib.import_module(f"{__name__}.{name}")
    return _lookup(name)


def _lookup(name):
    """The object registered as ``name`` in the "data" catalogue; AttributeError otherwise."""
    from ember.plugins.lookup import lookup

    return lookup("data", name, __name__, _PROVIDED_BY)


def __dir__():
    from ember.plugins import registry

    return sorted(set(globals()) | set(registry.catalogue("data")))
