"""``ember.nn.functional``: the functional forms of the layers.

PyTorch counterpart: torch/nn/functional.py (v2.13). The core defines the functional
forms of its own layers here; names provided by plugins (``relu``'s relatives,
``batch_norm``, ``cross_entropy``, ...) are found through the "functionals" catalogue
(``ember_register_functionals``) by the module-level ``__getattr__`` below.
"""

from ember.native.unary import relu  # noqa: F401  (the core's own relu op)


def __getattr__(name):
    from ember.nn._registry import lookup

    return lookup("functionals", name, __name__)
