"""Devices, and the backend that serves each device type.

PyTorch counterpart: c10/core/Device.h (``torch.device``) and
torch/utils/backend_registration.py (a device type plus a module of services) (v2.13).

A ``Device`` is a (type, index) pair, interned so identity comparison is enough on the
hot path. Its ``backend`` is the plugin-provided ``Backend`` record for its type,
looked up once and cached on the device.
"""

import re

# A device type, optionally ":index"; like PyTorch, no leading zeros or signs in the index.
_DEVICE_RE = re.compile(r"^([a-z_]+)(?::(0|[1-9][0-9]*))?$")


class Backend:
    """What a backend plugin provides for one device type.

    Args:
        name: the device type, e.g. ``"cpu"`` or ``"cuda"``.
        xp: the array namespace generic kernels are written against (numpy, cupy).
        to_host: ``array -> numpy.ndarray``.
        from_host: ``(numpy.ndarray, index) -> array`` on this device.
        synchronize: ``(index) -> None``; waits for queued work.
        is_available: ``() -> bool``.
        device_count: ``() -> int``.
        memory_stats: ``(index) -> dict``.
        kernels: ``{op qualname: kernel}`` overrides of generic kernels.
        module: the device module with the backend's other services, read by
            ``ember.cuda`` (``current_device``, ``set_device``, ``empty_cache``,
            ``manual_seed``, ``get_device_name``, ``pin_memory``, ``is_pinned``,
            ``unavailable_reason``), as ``torch.cuda`` is CUDA's; None when there are none.

    A backend whose array library is expensive to import (CuPy) may pass ``xp=None``
    and set ``xp`` and ``array_type`` once its ``is_available()`` first answers True:
    ember reads ``xp`` only through ``device.backend``, which checks availability first.
    """

    __slots__ = ("name", "xp", "to_host", "from_host", "synchronize", "is_available",
                 "device_count", "memory_stats", "kernels", "plugin", "array_type", "module")

    def __init__(self, name, xp, to_host, from_host, synchronize=None, is_available=None,
                 device_count=None, memory_stats=None, kernels=None, module=None):
        self.name = name
        self.xp = xp
        self.to_host = to_host
        self.from_host = from_host
        self.synchronize = synchronize or (lambda index=None: None)
        self.is_available = is_available or (lambda: True)
        self.device_count = device_count or (lambda: 1)
        self.memory_stats = memory_stats or (lambda index=None: {})
        self.kernels = dict(kernels or {})
        self.plugin = None
        self.array_type = getattr(xp, "ndarray", None)
        self.module = module

    def unavailable_reason(self):
        """Why this backend cannot be used now (None when it can, or cannot tell)."""
        reason = getattr(self.module, "unavailable_reason", None)
        return reason() if reason is not None else None

    def __repr__(self):
        return f"<Backend {self.name!r} from plugin {self.plugin!r}>"


class device:
    """A device such as ``ember.device("cpu")`` or ``ember.device("cuda", 0)``."""

    __slots__ = ("type", "index", "_backend")
    _interned = {}

    def __new__(cls, type_or_str, index=None):
        if isinstance(type_or_str, device):
            return type_or_str
        key = (type_or_str, index)
        found = cls._interned.get(key)
        if found is not None:
            return found
        dev_type, index = _parse(type_or_str, index)
        # "cuda:1" and ("cuda", 1) are the same object, so the hot path can compare identity.
        self = cls._interned.get((dev_type, index))
        if self is None:
            self = object.__new__(cls)
            self.type = dev_type
            self.index = index
            self._backend = None
            cls._interned[(dev_type, index)] = self
        cls._interned[key] = self
        return self

    @property
    def backend(self):
        backend = self._backend
        if backend is None:
            from ember.plugins import registry
            backend = self._backend = registry.backend(self.type)
        return backend

    def __repr__(self):
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other):
        # Like torch.device, a device never equals a string: compare with device("cpu").
        if not isinstance(other, device):
            return NotImplemented
        return self.type == other.type and self.index == other.index

    def __hash__(self):
        return hash((self.type, self.index))

    def __reduce__(self):
        return (device, (self.type, self.index))


def _parse(type_or_str, index):
    """``(type, index)`` from ``"cuda:1"`` or ``("cuda", 1)``, with PyTorch's errors."""
    if not isinstance(type_or_str, str):
        raise TypeError(f"device() received an invalid combination of arguments - got "
                        f"({type(type_or_str).__name__}), but expected a device string such as 'cpu' or 'cuda:0'")
    if index is not None and (not isinstance(index, int) or isinstance(index, bool)):
        raise TypeError(f"device(): argument 'index' (position 2) must be int, not {type(index).__name__}")
    match = _DEVICE_RE.match(type_or_str)
    if match is None:
        raise RuntimeError(f"Invalid device string: '{type_or_str}'")
    dev_type, dev_index = match.group(1), match.group(2)
    if dev_index is not None:
        if index is not None:
            raise RuntimeError("type (string) must not include an index because index was passed "
                               f"explicitly: {type_or_str}")
        index = int(dev_index)
    if index is not None and index < 0:
        raise RuntimeError("Device index must not be negative")
    return dev_type, index


def with_index(dev):
    """``dev``, or for an index-less ``"cuda"`` the backend's current device: a tensor
    made with ``device="cuda"`` is on ``cuda:0`` (or whichever is current), as in PyTorch."""
    if dev.index is not None:
        return dev
    current = getattr(dev.backend.module, "current_device", None)
    return dev if current is None else device(dev.type, current())


def _forget_backends():
    """Called when plugins change: devices look their backend up again."""
    for dev in device._interned.values():
        dev._backend = None


CPU = device("cpu")

# The device factories use when given none: ``ember.set_default_device`` (torch's
# torch/utils/_device.py). A one-element list, read on every factory call.
_default_device = [CPU]


def get_default_device():
    """The device factory functions (``zeros``, ``ones``, ``empty``, ``full``, ``rand*``,
    ``arange``, ``tensor``, ...) use when given none: ``cpu`` unless set."""
    return _default_device[0]


def set_default_device(device_):
    """Make factory functions create tensors on ``device_`` (None: back to ``cpu``)."""
    _default_device[0] = CPU if device_ is None else device(device_)
