"""ember-data: datasets, samplers, the DataLoader, image transforms and embedded datasets.

PyTorch counterpart: torch/utils/data/__init__.py (v2.13), plus the parts of
torchvision ember needs (transforms, ImageFolder).

ember imports this module when it first needs a catalogue and calls the hook below,
which imports the data modules only then; ``ember.data.<Name>`` and
``ember_data.<Name>`` both resolve lazily, so ``ember plugins`` stays fast.
"""

import importlib

from ember.plugins import hookimpl

__version__ = "0.1.0"

# public name -> (module, attribute); what ``ember_register_data`` registers.
_API = {
    "Dataset": ("ember_data.dataset", "Dataset"),
    "IterableDataset": ("ember_data.dataset", "IterableDataset"),
    "TensorDataset": ("ember_data.dataset", "TensorDataset"),
    "StackDataset": ("ember_data.dataset", "StackDataset"),
    "ConcatDataset": ("ember_data.dataset", "ConcatDataset"),
    "ChainDataset": ("ember_data.dataset", "ChainDataset"),
    "Subset": ("ember_data.dataset", "Subset"),
    "random_split": ("ember_data.dataset", "random_split"),
    "DataLoader": ("ember_data.dataloader", "DataLoader"),
    "default_collate": ("ember_data._utils.collate", "default_collate"),
    "default_convert": ("ember_data._utils.collate", "default_convert"),
    "get_worker_info": ("ember_data._utils.worker", "get_worker_info"),
    "WorkerInfo": ("ember_data._utils.worker", "WorkerInfo"),
    "DatasetFolder": ("ember_data.folder", "DatasetFolder"),
    "ImageFolder": ("ember_data.folder", "ImageFolder"),
    "read_idx": ("ember_data.datasets.idx", "read_idx"),
    "load_dataset": ("ember_data.datasets", "load_dataset"),
    "list_datasets": ("ember_data.datasets", "list_datasets"),
    "transforms": ("ember_data.transforms", None),
    "datasets": ("ember_data.datasets", None),
}
_SAMPLERS = {
    "Sampler": ("ember_data.sampler", "Sampler"),
    "SequentialSampler": ("ember_data.sampler", "SequentialSampler"),
    "RandomSampler": ("ember_data.sampler", "RandomSampler"),
    "SubsetRandomSampler": ("ember_data.sampler", "SubsetRandomSampler"),
    "WeightedRandomSampler": ("ember_data.sampler", "WeightedRandomSampler"),
    "BatchSampler": ("ember_data.sampler", "BatchSampler"),
    "DistributedSampler": ("ember_data.distributed", "DistributedSampler"),
}


def _resolve(module_name, attribute):
    module = importlib.import_module(module_name)
    return module if attribute is None else getattr(module, attribute)


@hookimpl
def ember_register_data(register):
    for name, where in _API.items():
        register(_resolve(*where), name=name, kind="api")
    for name, where in _SAMPLERS.items():
        register(_resolve(*where), name=name, kind="sampler")
    from ember_data.datasets import EMBEDDED

    for name, (builder, info) in EMBEDDED.items():
        register(builder, name=name, kind="dataset", **info)


def __getattr__(name):
    where = _API.get(name) or _SAMPLERS.get(name)
    if where is None:
        raise AttributeError(f"module 'ember_data' has no attribute '{name}'")
    return _resolve(*where)


def __dir__():
    return sorted(set(globals()) | set(_API) | set(_SAMPLERS))
