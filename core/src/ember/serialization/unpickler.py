"""The weights-only unpickler: a small pickle machine that builds data and runs nothing.

PyTorch counterpart: torch/_weights_only_unpickler.py (v2.13).

Like torch's, this is a machine of its own, not ``pickle.Unpickler`` with a
``find_class`` override: CPython's C unpickler sizes its memo from the indices a file
declares (CVE-2018-20406) and trusts lengths before reading them. Here:

- only about 30 protocol-2 opcodes exist (the table at the bottom); any other byte is refused;
- GLOBAL names are looked up in a table of ember values and is never imported;
- REDUCE and NEWOBJ call only :class:`SafeCallable` entries of that table, which check
  their own arguments;
- APPEND(S) only on lists, SETITEM(S) only on dicts, BUILD only to give a state_dict
  its ``_metadata``. This is stricter than torch's, whose BUILD also runs
  ``Tensor.set_`` (legacy files), ``Parameter.__setstate__``, updates any attribute of
  an OrderedDict and builds instances of allowlisted classes: a file that relies on
  those loads in torch and is refused here, with a message naming the BUILD;
- the memo is a dict whose indices must come in order (no huge index), and every length
  field is checked against the bytes that remain before anything is read or allocated.

Every refusal raises :class:`~ember.serialization.errors.CheckpointError`.
"""

import collections
import struct

from ember.serialization.errors import CheckpointError, describe

_MARK = object()  # stands on the stack for a MARK opcode
_MAX_GLOBAL_NAME = 256
MAX_TUPLE_DEPTH = 100  # see NOTE [ Tuple depth ]


class SafeCallable:
    """A table entry that REDUCE (or, if ``is_class``, NEWOBJ) may call.

    ``function`` receives the pickled argument tuple unpacked, and must check it
    (raising ``CheckpointError``) before building anything.
    """

    __slots__ = ("name", "function", "is_class")

    def __init__(self, name, function, is_class=False):
        self.name = name
        self.function = function
        self.is_class = is_class

    def __repr__(self):
        return f"<checkpoint global {self.name}>"


class Refused:
    """A table entry for a known name ember cannot represent: GLOBAL raises ``reason``."""

    __slots__ = ("reason",)

    def __init__(self, reason):
        self.reason = reason


class WeightsOnlyUnpickler:
    """Builds the object tree of one ``data.pkl``.

    Args:
        data: the pickle bytes.
        globals_table: ``{(module, name): value}``; a value is either inert data
            (a dtype, a marker) or a :class:`SafeCallable`.
        persistent_load: ``pid_tuple -> object`` for BINPERSID.
    """

    def __init__(self, data, globals_table, persistent_load):
        self._data = memoryview(data)
        self._pos = 0
        self._globals = globals_table
        self._persistent_load = persistent_load
        self._stack = []
        self._metastack = []
        self._memo = {}
        self._tuple_depths = {}  # id -> (tuple, depth) for tuples holding tuples

    def load(self):
        handlers = _HANDLERS
        while True:
            opcode = self._read(1)[0]
            handler = handlers.get(opcode)
            if handler is None:
                raise CheckpointError(
                    f"unsupported pickle opcode {bytes([opcode])!r} at byte "
                    f"{self._pos - 1} (the weights-only loader accepts protocol-2 data "
                    "opcodes only)")
            if handler is _stop:
                return self._finish()
            handler(self)

    # --- reading, with every length checked first ----------------------------------------
    def _read(self, n):
        end = self._pos + n
        if end > len(self._data):
            raise CheckpointError(f"data.pkl is truncated: {n} bytes wanted at byte "
                                  f"{self._pos}, {len(self._data) - self._pos} left")
        chunk = self._data[self._pos:end]
        self._pos = end
        return chunk

    def _read_line(self):
        end = self._pos + _MAX_GLOBAL_NAME
        window = bytes(self._data[self._pos:end])
        newline = window.find(b"\n")
        if newline < 0:
            raise CheckpointError(f"unterminated or overlong GLOBAL name at byte {self._pos}")
        self._pos += newline + 1
        try:
            return window[:newline].decode("ascii")
        except UnicodeDecodeError:
            raise CheckpointError(f"non-ASCII GLOBAL name at byte {self._pos}") from None

    def _unpack(self, fmt):
        return struct.unpack(fmt, self._read(struct.calcsize(fmt)))[0]

    # --- the stack ------------------------------------------------------------------------
    def _pop(self):
        if not self._stack:
            raise CheckpointError(f"pickle stack underflow at byte {self._pos - 1}")
        return self._stack.pop()

    def _top(self):
        if not self._stack:
            raise CheckpointError(f"pickle stack underflow at byte {self._pos - 1}")
        return self._stack[-1]

    def _pop_mark(self):
        if not self._metastack:
            raise CheckpointError(f"pickle opcode at byte {self._pos - 1} needs a MARK and there is none")
        items = self._stack
        self._stack = self._metastack.pop()
        return items

    def _finish(self):
        if self._metastack or len(self._stack) != 1:
            raise CheckpointError("data.pkl ends with a malformed stack")
        if self._pos != len(self._data):
            raise CheckpointError(f"data.pkl has {len(self._data) - self._pos} bytes after STOP")
        return self._stack[0]

    def _checked_tuple(self, items):
        # NOTE [ Tuple depth ]
        # Hashing a tuple (as a dict key or set item) recurses in C without a recursion
        # check: a tuple nested a million deep crashes CPython 3.11. Lists, dicts and sets
        # are unhashable and stop that recursion, so only tuple-in-tuple chains count.
        # Nested tuples are kept alive in the table, so their ids cannot be reused.
        depth = 1
        for item in items:
            if type(item) is tuple:
                depth = max(depth, 1 + self._tuple_depths.get(id(item), (None, 1))[1])
        if depth > MAX_TUPLE_DEPTH:
            raise CheckpointError(f"tuples nested deeper than {MAX_TUPLE_DEPTH} levels")
        if depth > 1:
            self._tuple_depths[id(items)] = (items, depth)
        return items

    def _call(self, target, args, opcode_name):
        if not isinstance(target, SafeCallable) or (opcode_name == "NEWOBJ"
                                                    and not target.is_class):
            raise CheckpointError(f"{opcode_name} of {describe(target)} is not allowed: "
                                  "only ember's table of weights-only constructors may "
                                  "be called")
        if type(args) is not tuple:
            raise CheckpointError(f"{opcode_name} of {target.name} needs an argument "
                                  f"tuple, got {type(args).__name__}")
        try:
            if opcode_name == "NEWOBJ" and target.name.startswith("user:"):
                # allow-listed: cls.__new__(cls, *args)
                return target.function.__new__(target.function, *args)
            return target.function(*args)
        except TypeError as e:  # wrong argument count for the ember constructor
            raise CheckpointError(f"bad arguments for {target.name}: {e}") from None


# --- opcode handlers ---------------------------------------------------------------------
def _stop(u):
    pass  # load() returns before calling it


def _proto(u):
    version = u._read(1)[0]
    if version != 2:
        raise CheckpointError(f"pickle protocol {version} is not supported: torch.save checkpoints use protocol 2")


def _mark(u):
    u._metastack.append(u._stack)
    u._stack = []


def _global(u):
    module = u._read_line()
    name = u._read_line()
    value = u._globals.get((module, name))
    if value is None:
        value = _user_allowed(module, name)  # add_safe_globals (safe_globals.py)
    if value is None:
        raise CheckpointError(f"global '{module}.{name}' is not allowed in a "
                              "weights-only checkpoint")
    if type(value) is Refused:
        raise CheckpointError(value.reason)
    u._stack.append(value)


def _reduce(u):
    args = u._pop()
    target = u._pop()
    u._stack.append(u._call(target, args, "REDUCE"))


def _newobj(u):
    args = u._pop()
    target = u._pop()
    u._stack.append(u._call(target, args, "NEWOBJ"))


def _user_allowed(module, name):
    """A table entry for an object allow-listed with ``add_safe_globals``, or None."""
    from ember.serialization.safe_globals import lookup

    obj = lookup(module, name)
    if obj is None:
        return None
    return SafeCallable(f"user:{module}.{name}", obj, is_class=isinstance(obj, type))


def _build(u):
    state = u._pop()
    target = u._top()
    # A state_dict carries its per-module versions as BUILD {'_metadata': OrderedDict}.
    # Anything else could set attributes that shadow methods, so it is refused.
    keys = list(state) if type(state) is dict else None
    if (type(target) is collections.OrderedDict and keys is not None and len(keys) == 1
            and type(keys[0]) is str and keys[0] == "_metadata"
            and type(state["_metadata"]) in (dict, collections.OrderedDict)):
        target._metadata = state["_metadata"]
        return
    from ember.serialization.safe_globals import is_allowed_instance

    if is_allowed_instance(target):  # a class allow-listed with add_safe_globals
        if hasattr(target, "__setstate__"):
            target.__setstate__(state)
        else:
            target.__dict__.update(state)
        return
    raise CheckpointError(f"BUILD of a {type(target).__name__} with a "
                          f"{type(state).__name__} state is not allowed: only a "
                          "state_dict's {'_metadata': ...} is accepted")


def _list_target(u, target, opcode_name):
    if type(target) is not list:
        raise CheckpointError(f"{opcode_name} on a {type(target).__name__} is not allowed (lists only)")
    return target


def _append(u):
    value = u._pop()
    _list_target(u, u._top(), "APPEND").append(value)


def _appends(u):
    items = u._pop_mark()
    _list_target(u, u._top(), "APPENDS").extend(items)


def _set_items(u, target, items, opcode_name):
    if type(target) not in (dict, collections.OrderedDict, collections.Counter):
        raise CheckpointError(f"{opcode_name} on a {type(target).__name__} is not allowed (dicts only)")
    if len(items) % 2:
        raise CheckpointError(f"{opcode_name} with an odd number of items")
    try:
        for i in range(0, len(items), 2):
            target[items[i]] = items[i + 1]
    except TypeError as e:  # an unhashable key
        raise CheckpointError(f"{opcode_name}: bad dict key: {e}") from None


def _setitem(u):
    value = u._pop()
    key = u._pop()
    _set_items(u, u._top(), [key, value], "SETITEM")


def _setitems(u):
    items = u._pop_mark()
    _set_items(u, u._top(), items, "SETITEMS")


def _tuple(u):
    items = tuple(u._pop_mark())  # first: popping the mark swaps u._stack
    u._stack.append(u._checked_tuple(items))


def _tuple_n(n):
    def handler(u):
        if len(u._stack) < n:
            raise CheckpointError(f"pickle stack underflow at byte {u._pos - 1}")
        items = tuple(u._stack[len(u._stack) - n:])
        del u._stack[len(u._stack) - n:]
        u._stack.append(u._checked_tuple(items))
    return handler


def _push(make):
    def handler(u):
        u._stack.append(make())
    return handler


def _binint(u):
    u._stack.append(u._unpack("<i"))


def _binint1(u):
    u._stack.append(u._read(1)[0])


def _binint2(u):
    u._stack.append(u._unpack("<H"))


def _long1(u):
    n = u._read(1)[0]
    u._stack.append(int.from_bytes(u._read(n), "little", signed=True))


def _binfloat(u):
    u._stack.append(u._unpack(">d"))


def _binunicode(u):
    n = u._unpack("<I")
    try:
        u._stack.append(str(u._read(n), "utf-8", "surrogatepass"))
    except UnicodeDecodeError:
        raise CheckpointError(f"invalid UTF-8 string before byte {u._pos}") from None


def _short_binstring(u):
    n = u._read(1)[0]
    try:
        u._stack.append(str(u._read(n), "ascii"))
    except UnicodeDecodeError:
        raise CheckpointError(f"non-ASCII SHORT_BINSTRING before byte {u._pos}") from None


def _binpersid(u):
    u._stack.append(u._persistent_load(u._pop()))


def _get(fmt):
    def handler(u):
        index = u._unpack(fmt)
        try:
            u._stack.append(u._memo[index])
        except KeyError:
            raise CheckpointError(f"memo entry {index} is read before it is written") from None
    return handler


def _put(fmt):
    def handler(u):
        index = u._unpack(fmt)
        # Picklers number memo entries 0, 1, 2, ...; a larger index is a memo bomb
        # (CVE-2018-20406).
        if index > len(u._memo):
            raise CheckpointError(f"memo index {index} out of range: only "
                                  f"{len(u._memo)} entries so far")
        u._memo[index] = u._top()
    return handler


_HANDLERS = {
    0x80: _proto, ord("."): _stop, ord("("): _mark, ord("c"): _global,
    0x81: _newobj, ord("R"): _reduce, ord("b"): _build,
    ord("a"): _append, ord("e"): _appends, ord("s"): _setitem, ord("u"): _setitems,
    ord("t"): _tuple, 0x85: _tuple_n(1), 0x86: _tuple_n(2), 0x87: _tuple_n(3),
    ord(")"): _push(tuple), ord("]"): _push(list), ord("}"): _push(dict),
    0x8F: _push(set),
    ord("N"): _push(lambda: None), 0x88: _push(lambda: True),
    0x89: _push(lambda: False),
    ord("J"): _binint, ord("K"): _binint1, ord("M"): _binint2, 0x8A: _long1,
    ord("G"): _binfloat, ord("X"): _binunicode, ord("U"): _short_binstring,
    ord("Q"): _binpersid,
    ord("h"): _get("<B"), ord("j"): _get("<I"),
    ord("q"): _put("<B"), ord("r"): _put("<I"),
}
