"""``ember.hub``: models and weights published as a repository with a ``hubconf.py``,
and checkpoints named by URL, read from the hub cache or a local directory.

PyTorch counterpart: torch/hub.py (``load``, ``list``, ``help``, ``get_dir``,
``set_dir``, ``load_state_dict_from_url``, ``download_url_to_file``) (v2.13).

# NOTE [ ember.hub never downloads ]
# torch.hub fetches a GitHub repository's archive, or a checkpoint URL, into its cache
# (``$TORCH_HOME/hub``, by default ~/.cache/torch/hub) the first time and reads the
# cache afterwards. ember reads the same layout (``$EMBER_HOME/hub``, by default
# ~/.cache/ember/hub; ``set_dir`` or ``EMBER_HOME=~/.cache/torch`` point it at torch's
# cache) but never goes to the network: a repository or a file that is not there is an
# error naming the path to place it at. ``file://`` URLs are read (copied into the
# cache). A repository is code that runs on load: torch asks before trusting a new one;
# ember only runs what someone has already put in its cache, so ``trust_repo`` is
# accepted and not asked.
"""

import contextlib
import hashlib
import importlib.util
import os
import re
import shutil
import sys
import urllib.parse

__all__ = ["download_url_to_file", "get_dir", "help", "list", "load", "load_state_dict_from_url", "set_dir"]

MODULE_HUBCONF = "hubconf.py"
VAR_DEPENDENCY = "dependencies"
HASH_REGEX = re.compile(r"-([a-f0-9]*)\.")
_hub_dir = None


def get_dir():
    """The hub cache: ``set_dir``'s directory, else ``$EMBER_HOME/hub`` (EMBER_HOME
    defaults to ``$XDG_CACHE_HOME/ember``, i.e. ~/.cache/ember)."""
    if _hub_dir is not None:
        return _hub_dir
    cache = os.getenv("XDG_CACHE_HOME", "~/.cache")
    return os.path.join(os.path.expanduser(os.getenv("EMBER_HOME", os.path.join(cache, "ember"))), "hub")


def set_dir(d):
    """Use ``d`` as the hub cache from now on."""
    global _hub_dir
    _hub_dir = os.path.expanduser(os.fspath(d))


def list(github, force_reload=False, skip_validation=False, trust_repo="check", verbose=True):  # noqa: A001
    """The entrypoints (public callables) of the cached repository's ``hubconf.py``."""
    hub_module = _hubconf(_cached_repo(github))
    return [name for name in dir(hub_module) if callable(getattr(hub_module, name)) and not name.startswith("_")]


def help(github, model, force_reload=False, skip_validation=False, trust_repo="check"):  # noqa: A001
    """The docstring of the entrypoint ``model`` of the cached repository."""
    return _entrypoint(_hubconf(_cached_repo(github)), model).__doc__


def load(repo_or_dir, model, *args, source="github", trust_repo="check", force_reload=False, verbose=True,
         skip_validation=False, **kwargs):
    """``model(*args, **kwargs)`` from the ``hubconf.py`` of a cached GitHub repository
    ("owner/name[:ref]") or, with ``source="local"``, of a directory."""
    source = source.lower()
    if source not in ("github", "local"):
        raise ValueError(f'Unknown source: "{source}". Allowed values: "github" | "local".')
    directory = _cached_repo(repo_or_dir) if source == "github" else repo_or_dir
    with _on_sys_path(directory):
        entry = _entrypoint(_hubconf(directory), model)
        return entry(*args, **kwargs)


def load_state_dict_from_url(url, model_dir=None, map_location=None, progress=True, check_hash=False,
                             file_name=None, weights_only=False):
    """The checkpoint ``url`` names, read with ``ember.load`` from ``model_dir``
    (default: ``get_dir()/checkpoints``); ``check_hash`` compares the file's SHA-256
    with the hex prefix after the last "-" in its name, as torch's does."""
    from ember.serialization import load as ember_load

    model_dir = model_dir or os.path.join(get_dir(), "checkpoints")
    filename = file_name or os.path.basename(urllib.parse.urlparse(url).path)
    cached_file = os.path.join(model_dir, filename)
    hash_prefix = None
    if check_hash:
        match = HASH_REGEX.search(filename)
        hash_prefix = match.group(1) if match else None
    if not os.path.exists(cached_file):
        os.makedirs(model_dir, exist_ok=True)
        download_url_to_file(url, cached_file, hash_prefix, progress)
    elif hash_prefix:
        _check_hash(cached_file, hash_prefix)
    return ember_load(cached_file, map_location=map_location, weights_only=weights_only)


def download_url_to_file(url, dst, hash_prefix=None, progress=True):
    """Copy a ``file://`` URL to ``dst`` (checking ``hash_prefix``); any other URL is an
    error naming ``dst`` (NOTE [ ember.hub never downloads ])."""
    parts = urllib.parse.urlparse(url)
    if parts.scheme != "file":
        raise RuntimeError(f"ember.hub does not download ({url}): place the file at {dst}")
    source = urllib.parse.unquote(parts.path)
    if hash_prefix:
        _check_hash(source, hash_prefix)
    partial = dst + ".partial"
    shutil.copyfile(source, partial)
    os.replace(partial, dst)


def _check_hash(path, hash_prefix):
    with open(path, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    if not digest.startswith(hash_prefix):
        raise RuntimeError(f'invalid hash value (expected "{hash_prefix}", got "{digest}")')


def _cached_repo(github):
    """The cached copy of "owner/name[:ref]" (ref: main, else master)."""
    repo, _, ref = github.partition(":")
    owner, _, name = repo.partition("/")
    if not owner or not name:
        raise ValueError(f'Invalid repository "{github}": expected "repo_owner/repo_name[:ref]"')
    hub = get_dir()
    for candidate in [ref] if ref else ["main", "master"]:
        directory = os.path.join(hub, "_".join([owner, name, candidate.replace("/", "_")]))
        if os.path.exists(os.path.join(directory, MODULE_HUBCONF)):
            return directory
    wanted = os.path.join(hub, f"{owner}_{name}_{(ref or 'main').replace('/', '_')}")
    raise RuntimeError(f"ember.hub does not download: the repository {repo} is not in the hub cache; place a "
                       f"copy of it (with its {MODULE_HUBCONF}) at {wanted}")


def _hubconf(directory):
    path = os.path.join(directory, MODULE_HUBCONF)
    if not os.path.exists(path):
        raise FileNotFoundError(f"no {MODULE_HUBCONF} in {directory}")
    with _on_sys_path(directory):
        spec = importlib.util.spec_from_file_location(MODULE_HUBCONF, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    return module


def _entrypoint(hub_module, model):
    if not isinstance(model, str):
        raise ValueError("Invalid input: model should be a string of function name")
    missing = [name for name in getattr(hub_module, VAR_DEPENDENCY, None) or []
               if importlib.util.find_spec(name) is None]
    if missing:
        raise RuntimeError(f"Missing dependencies: {', '.join(missing)}")
    func = getattr(hub_module, model, None)
    if func is None or not callable(func):
        raise RuntimeError(f"Cannot find callable {model} in hubconf")
    return func


@contextlib.contextmanager
def _on_sys_path(path):
    sys.path.insert(0, path)
    try:
        yield
    finally:
        sys.path.remove(path)
