"""``ember.data``: datasets, samplers, the DataLoader and transforms, found by name.

PyTorch counterpart: torch/utils/data/__init__.py (v2.13). The data pipeline lives in
the ember-data distribution (``ember_data``); ``ember.data.DataLoader`` looks the name
up in the "data" catalogue that plugins fill through ``ember_register_data``, so a
third-party sampler or dataset is reachable here too. When ember-data is missing, a
name it provides raises an AttributeError that says which distribution to install.
"""

from ember.plugins import forwarding as _forwarding

DISTRIBUTION = _forwarding.DATA
# What ember-data registers, for the "not installed" message (ember_data/__init__.py has the list).
FIRST_PARTY = frozenset(_forwarding.PROVIDED_BY["data"])

# transforms and datasets are forwarding submodules too, so that
# ``from ember.data.transforms import Compose`` works as an import statement.
__getattr__, __dir__ = _forwarding.forwarder(__name__)  # NOTE [ Forwarding modules ]
