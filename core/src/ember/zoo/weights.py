"""Weights from local files only: the weights cache and checkpoint reading.

PyTorch counterpart: torch/hub.py (v2.13: ``get_dir``, ``$TORCH_HOME``,
``load_state_dict_from_url``), minus the network: nothing here downloads. A named weight
file lives in ``<EMBER_HOME>/weights/``; ``EMBER_HOME`` defaults to
``$XDG_CACHE_HOME/ember`` (``~/.cache/ember``), as torch's ``$TORCH_HOME`` defaults to
``~/.cache/torch``.

A checkpoint may be a bare state dict (ember's or PyTorch's), a dict holding one under
``"model"`` or ``"state_dict"`` (ember's training checkpoints, many PyTorch scripts), and
its keys may carry the ``"module."`` prefix DataParallel adds.
"""

import os
import pathlib

from ember.zoo.errors import ZooError


def ember_home():
    """The folder ember caches things in: ``$EMBER_HOME``, else ``$XDG_CACHE_HOME/ember``."""
    home = os.environ.get("EMBER_HOME")
    if home:
        return pathlib.Path(home).expanduser()
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join("~", ".cache")
    return pathlib.Path(cache).expanduser() / "ember"


def weights_dir():
    """Where ``pretrained=True`` looks for named weight files: ``<EMBER_HOME>/weights``."""
    return ember_home() / "weights"


def find_weights(info):
    """The path of the first known weight file of ``info`` (a ModelInfo) in the cache.

    Raises FileNotFoundError naming the expected path when it is not there, and when the
    model knows no weight file at all.
    """
    if not info.weights:
        raise FileNotFoundError(f"model {info.name!r} has no known weight files; pass pretrained=PATH "
                                f"to load a checkpoint of your own")
    expected = [weights_dir() / name for name in info.weights]
    for path in expected:
        if path.is_file():
            return path
    listed = ", ".join(str(p) for p in expected)
    raise FileNotFoundError(f"no weights for model {info.name!r}: expected {listed} (nothing is downloaded; "
                            f"copy the file there, set EMBER_HOME, or pass pretrained=PATH)")


def require_checkpoint_file(path):
    """Raise the one FileNotFoundError every command gives for a missing weights file."""
    if os.path.isdir(path):
        raise FileNotFoundError(f"no such checkpoint file: {str(path)!r} is a folder")
    if not os.path.isfile(path):
        raise FileNotFoundError(f"no such checkpoint file: {str(path)!r}")


def read_checkpoint(path):
    """``(state_dict, checkpoint dict or None)`` from an ember or PyTorch checkpoint file."""
    import ember
    from ember.serialization.errors import CheckpointError

    require_checkpoint_file(path)
    try:
        loaded = ember.load(path, map_location="cpu", weights_only=True)
    except CheckpointError as exc:  # say which file (a command may read several)
        raise CheckpointError(f"{str(path)!r}: {exc}") from exc
    checkpoint = None
    if isinstance(loaded, dict):
        for key in ("model", "state_dict"):
            if isinstance(loaded.get(key), dict):
                checkpoint, loaded = loaded, loaded[key]
                break
    if not isinstance(loaded, dict):
        raise ZooError(f"{str(path)!r} holds a {type(loaded).__name__}, not a state dict")
    if loaded and all(key.startswith("module.") for key in loaded):
        loaded = {key[len("module."):]: value for key, value in loaded.items()}
    return loaded, checkpoint
