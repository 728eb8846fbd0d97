"""Defining operators from outside the core: schema, kernels per device, backward.

PyTorch counterpart: torch/library.py (``custom_op``, ``register_kernel``,
``register_autograd``; ``register_autocast_kernel`` is ``impl`` at an Autocast key) and
torch/_library/infer_schema.py (v2.13). ember leaves out schema strings with alias
annotations, fake (meta) kernels and ``mutates_args``: an ember op returns new arrays,
and its schema is read from the kernel's signature.

    from ember import library

    @library.custom_op("mylib::softclamp", promote="int_to_float", save="inputs")
    def softclamp(xp, x, *, limit=1.0):
        return limit * xp.tanh(x / limit)

    @library.register_kernel(softclamp, "cpu")
    def _softclamp_cpu(xp, x, *, limit=1.0):
        ...  # a NumPy-only implementation, used on cpu instead of the generic one

    def _softclamp_backward(ctx, grad):
        (x,) = ctx.saved_inputs
        limit = ctx.attrs.get("limit", 1.0)
        return (grad * (1 - (x / limit).tanh() ** 2),)

    library.register_autograd(softclamp, _softclamp_backward)

The op is an ``ember.dispatcher.Op``: call it with tensors positionally and
non-tensor arguments by keyword, ``softclamp(x, limit=2.0)``. A plugin registers it in
its ``ember_register_ops`` hook; it is then also ``ember.ops.mylib.softclamp``.
"""

import inspect
import re

from ember.dispatcher import COMPARE, DEFAULT, INT_TO_FLOAT, NONE, Op

PROMOTIONS = {"none": NONE, "default": DEFAULT, "int_to_float": INT_TO_FLOAT, "compare": COMPARE}
SAVES = (None, "inputs", "outputs", "both")
OPMATHS = (False, True, "unrounded")

_QUALNAME_RE = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)::([A-Za-z_][A-Za-z0-9_]*)$")


def custom_op(qualname, *, promote="none", save=None, num_outputs=1, backward=None,
              opmath=False, jvp=None):
    """Decorator: turn ``kernel(xp, *arrays, **attrs)`` into an op named ``qualname``.

    The decorated function becomes the generic kernel: it runs on every device, with
    ``xp`` the device's array namespace (numpy, cupy), so it must use functions both
    share.

    Args:
        qualname: ``"namespace::name"``; the namespace must not be ``aten``.
        promote: how inputs are type-promoted first: ``"none"``, ``"default"``,
            ``"int_to_float"`` or ``"compare"``.
        save: what backward reads: ``"inputs"``, ``"outputs"``, ``"both"`` or None.
        num_outputs: how many arrays the kernel returns (None: as many as it returns).
        backward, jvp: ``fn(ctx, *grads)``, ``fn(ctx, *tangents)`` (or ``register_*``).
        opmath: True: float16 and bfloat16 compute in float32, rounded once (NOTE
            [ opmath ]); ``"unrounded"``: in float32, returned in float32.

    Returns:
        A decorator that returns the ``Op``.
    """
    match = _QUALNAME_RE.match(qualname) if isinstance(qualname, str) else None
    if match is None:
        raise ValueError("custom_op: expected a name of the form 'namespace::name', "
                         f"got {qualname!r}")
    if match.group(1) == "aten":
        raise ValueError("custom_op: the 'aten' namespace is reserved for ember's "
                         "built-in operators")
    for option, value, allowed in (("promote", promote, sorted(PROMOTIONS)),
                                   ("save", save, SAVES), ("opmath", opmath, OPMATHS)):
        if value not in allowed:
            raise ValueError(f"custom_op: {option} must be one of {allowed}, "
                             f"got {value!r}")

    def define(kernel):
        op = Op(qualname, kernel, backward, promote=PROMOTIONS[promote], save=save,
                num_outputs=num_outputs, plugin=None, opmath=opmath, jvp=jvp)
        op.doc = kernel.__doc__
        return op
    return define


def register_kernel(op, device_types, func=None):
    """Register ``func(xp, *arrays, **attrs)`` as ``op``'s kernel on one or more device
    types, replacing the generic kernel there. Usable as a decorator.

    A second kernel for the same (op, device type) replaces the first, as in PyTorch
    2.13 (whose ``register_kernel`` overwrites silently too).
    """
    op = _as_op(op)
    types = (device_types,) if isinstance(device_types, str) else tuple(device_types)

    def add(func):
        for device_type in types:
            op.register_kernel(device_type, func)
        return func
    return add(func) if func is not None else add


def register_autograd(op, backward, *, save=None):
    """Set ``op``'s backward formula ``backward(ctx, *grads) -> one grad per input``.

    Args:
        save: if given, what the formula reads (``"inputs"``, ``"outputs"``, ``"both"``),
            replacing the op's ``save``.
    """
    op = _as_op(op)
    if save is not None:
        if save not in SAVES:
            raise ValueError(f"register_autograd: save must be one of {SAVES}, got {save!r}")
        op.save = save
    op.register_backward(backward)
    return op


def register_jvp(op, rule):
    """Set ``op``'s forward-derivative rule ``rule(ctx, *tangents) -> tangent(s)``: ``ctx``
    reads as a backward formula's (``saved_inputs``, ``saved_outputs``, ``attrs``), each
    tangent is None for an input without one; ``"auto_element_wise"`` or
    ``"auto_linear"`` as in derivatives.yaml, ``"multilinear"``, ``"reduction"`` or a
    ``Decomposition`` (NOTE [ Forward grads at the dispatcher ]
    in ember/autograd/forward_grad.py). PyTorch's ``register_autograd`` has no forward
    counterpart: a torch custom op gets forward AD through an ``autograd.Function``'s
    ``jvp``."""
    from ember.autograd import forward_grad

    op = _as_op(op)
    markers = (forward_grad.AUTO_ELEMENT_WISE, forward_grad.AUTO_LINEAR, forward_grad.MULTILINEAR,
               forward_grad.REDUCTION)
    if not (callable(rule) or rule in markers or isinstance(rule, forward_grad.Decomposition)):
        raise ValueError(f"register_jvp: expected a function, a Decomposition or one of {markers}, got {rule!r}")
    op.register_jvp(rule)
    return op


def register_autocast_kernel(op, device_types, func=None):
    """Register ``func(*inputs, **attrs)`` (tensors, not arrays) to run in place of ``op``
    while an ``ember.autocast`` region casts its inputs' device type, with autocast
    suspended inside it: it casts (``ember.amp.state.cached_cast``), calls ``op`` and may
    cast the result back. Usable as a decorator. PyTorch's counterpart is a kernel at the
    op's ``AutocastCPU``/``Autocast`` dispatch key (``TORCH_LIBRARY_IMPL(ns, AutocastCPU,
    m)``, ``torch.library.impl(op, "AutocastCPU")``); ops with no kernel there, like ops
    on no autocast list, run uncast.
    """
    from ember.amp.state import suspended
    from ember.dispatch_modes import autocast_kernels

    op = _as_op(op)
    types = (device_types,) if isinstance(device_types, str) else tuple(device_types)

    def add(func):
        def run(*inputs, **attrs):
            with suspended():
                return func(*inputs, **attrs)
        run.__wrapped__ = func
        for device_type in types:
            autocast_kernels.setdefault(op.qualname, {})[device_type] = run
        return func
    return add(func) if func is not None else add


def schema(op):
    """The op's signature, read from its generic kernel: ``"ns::name(x, *, limit=1.0) -> Tensor"``.

    Positional kernel parameters (after ``xp``) are tensor (or scalar) inputs;
    keyword-only ones are the non-tensor attributes.
    """
    op = _as_op(op)
    if op.num_outputs is None:  # as many as the kernel returns (loss::cross_entropy's kept parts)
        returns = "(Tensor, ...)"
    else:
        returns = "Tensor" if op.num_outputs == 1 else "(" + ", ".join(["Tensor"] * op.num_outputs) + ")"
    kernel = op.generic or next(iter(op.kernels.values()), None)
    try:
        params = list(inspect.signature(kernel).parameters.values())[1:]  # drop xp
    except (TypeError, ValueError):
        return f"{op.qualname}(...) -> {returns}"
    return f"{op.qualname}({_format_params(params)}) -> {returns}"


def _format_params(params):
    parts = []
    star_written = False
    for p in params:
        if p.kind is p.KEYWORD_ONLY and not star_written:
            parts.append("*")
            star_written = True
        if p.kind is p.VAR_POSITIONAL:
            parts.append(f"*{p.name}")
            star_written = True
        elif p.kind is p.VAR_KEYWORD:
            parts.append(f"**{p.name}")
        elif p.default is p.empty:
            parts.append(p.name)
        else:
            parts.append(f"{p.name}={p.default!r}")
    return ", ".join(parts)


def _as_op(op):
    """An ``Op`` from itself or its qualified name (``"mylib::softclamp"``)."""
    if isinstance(op, Op):
        return op
    if isinstance(op, str):
        from ember.plugins import registry

        found = registry.catalogue("ops").get(op)
        if found is None:
            raise ValueError(f"no operator named {op!r} is registered")
        return found.obj
    raise TypeError(f"expected an ember op or its qualified name, got {type(op).__name__}")


__all__ = ["custom_op", "register_kernel", "register_autograd", "register_jvp", "register_autocast_kernel", "schema"]
