"""``ember.nn.functional``: the functional forms of the layers.

PyTorch counterpart: torch/nn/functional.py (v2.13). The core defines the functional
forms of its own layers here; names provided by plugins (``relu``'s relatives,
``batch_norm``, ``cross_entropy``, ...) are found through the "functionals" catalogue
(``ember_register_functionals``) by the module-level ``__getattr__`` below.
"""

from ember.native import unary as _unary

# --- dense layers, embedding, dropout, attention ------------------------------------
# (ember/native/linear.py, embedding.py, dropout.py, attention.py)
# isort: split
from ember.native.attention import multi_head_attention_forward, scaled_dot_product_attention  # noqa: F401
from ember.native.dropout import dropout, dropout1d, dropout2d  # noqa: F401
from ember.native.embedding import embedding, one_hot  # noqa: F401
from ember.native.linear import bilinear, linear  # noqa: F401

# --- end of dense layers, embedding, dropout, attention -----------------------------


def relu(input, inplace=False):
    """``max(input, 0)``, the core's ``aten::relu`` op; ``inplace=True`` overwrites ``input``
    (torch.nn.functional.relu's signature; ember-activation's ``relu`` is the same function)."""
    return input.relu_() if inplace else _unary.relu(input)


def __getattr__(name):
    from ember.nn._registry import lookup

    return lookup("functionals", name, __name__)
