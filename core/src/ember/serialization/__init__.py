"""Saving and loading: PyTorch zip checkpoints and safetensors files.

PyTorch counterpart: torch/serialization.py and torch/_weights_only_unpickler.py (v2.13),
split here by concept:

- ``checkpoint.py``: ``save`` / ``load`` (the zip layout, storages, devices);
- ``pickler.py``: ember objects as protocol-2 opcodes naming torch's globals;
- ``objects.py``: any other picklable object, by its reduction (loads with weights_only=False);
- ``trusted_load.py``: ``load(weights_only=False)``, the caller's explicit trust;
- ``safe_globals.py``: ``add_safe_globals`` / ``safe_globals``, the weights-only allow-list;
- ``unpickler.py``: the weights-only pickle machine (torch/_weights_only_unpickler.py);
- ``torch_globals.py``: the allowed torch names and the ember objects they build;
- ``zip_reader.py``: the strict zip reader;
- ``atomic.py``: atomic file replacement;
- ``safetensors_format.py``: the safetensors format, read and written on raw bytes.
"""

from ember.serialization.checkpoint import load, save
from ember.serialization.errors import CheckpointError
from ember.serialization.safe_globals import add_safe_globals, clear_safe_globals, get_safe_globals, safe_globals
from ember.serialization.safetensors_format import load_safetensors, save_safetensors

__all__ = ["CheckpointError", "add_safe_globals", "clear_safe_globals", "get_safe_globals", "safe_globals", "load",
           "load_safetensors", "save", "save_safetensors"]
