"""Pytrees: nested lists, tuples, named tuples and dicts of leaves, flattened and rebuilt.

PyTorch counterpart: torch/utils/_pytree.py (v2.13). ember's transforms (``ember.func``)
take their inputs as pytrees, as torch.func does: ``grad(loss)(params, x)`` where
``params`` is a dict of tensors.

A spec is a plain tuple: ``None`` for a leaf, or ``(kind, context, children)`` where
``kind`` is the container type, ``context`` its keys (dict) or field names
(namedtuple), and ``children`` the children's specs. Left out: registering other
container types, and torch's ``TreeSpec`` class with its string form.
"""

import collections

LEAF = None


def _is_namedtuple(value):
    return isinstance(value, tuple) and hasattr(value, "_fields")


def tree_flatten(tree):
    """``(leaves, spec)``: the leaves left to right (dicts in their insertion order)."""
    leaves = []
    return leaves, _flatten(tree, leaves)


def _flatten(tree, leaves):
    if isinstance(tree, dict):
        keys = list(tree)
        return (type(tree), keys, tuple(_flatten(tree[k], leaves) for k in keys))
    if _is_namedtuple(tree):
        return (type(tree), None, tuple(_flatten(v, leaves) for v in tree))
    if type(tree) in (list, tuple):
        return (type(tree), None, tuple(_flatten(v, leaves) for v in tree))
    leaves.append(tree)
    return LEAF


def tree_unflatten(leaves, spec):
    """The tree of ``spec``'s shape holding ``leaves`` (the inverse of ``tree_flatten``)."""
    leaves = iter(leaves)
    tree = _unflatten(leaves, spec)
    if next(leaves, _END) is not _END:
        raise ValueError("tree_unflatten: more leaves than the spec has places for")
    return tree


_END = object()


def _unflatten(leaves, spec):
    if spec is LEAF:
        leaf = next(leaves, _END)
        if leaf is _END:
            raise ValueError("tree_unflatten: fewer leaves than the spec has places for")
        return leaf
    kind, context, children = spec
    values = [_unflatten(leaves, child) for child in children]
    if issubclass(kind, dict):
        made = kind() if kind is not collections.defaultdict else collections.defaultdict()
        made.update(zip(context, values))
        return made
    if issubclass(kind, tuple) and kind is not tuple:
        return kind(*values)  # a namedtuple
    return kind(values)


def tree_leaves(tree):
    """The leaves of ``tree``, left to right."""
    return tree_flatten(tree)[0]


def tree_map(fn, tree):
    """``tree`` with every leaf replaced by ``fn(leaf)``."""
    leaves, spec = tree_flatten(tree)
    return tree_unflatten([fn(leaf) for leaf in leaves], spec)


def tree_structure(tree):
    """The spec of ``tree`` alone."""
    return tree_flatten(tree)[1]
