"""``ember.nn.functional``: the functional forms of the layers.

PyTorch counterpart: torch/nn/functional.py (v2.13). The core defines the functional
forms of its own layers here; names provided by plugins (``relu``'s relatives,
``batch_norm``, ``cross_entropy``, ...) are found through the "functionals" catalogue
(``ember_register_functionals``) by the module-level ``__getattr__`` below.
"""

from ember.native.unary import relu  # noqa: F401  (the core's own relu op)

# --- dense layers, embedding, dropout, attention ------------------------------------
# (ember/native/linear.py, embedding.py, dropout.py, attention.py)
# isort: split
from ember.native.attention import multi_head_attention_forward, scaled_dot_product_attention  # noqa: F401
from ember.native.dropout import dropout, dropout1d, dropout2d  # noqa: F401
from ember.native.embedding import embedding, one_hot  # noqa: F401
from ember.native.linear import bilinear, linear  # noqa: F401

# --- end of dense layers, embedding, dropout, attention -----------------------------


def __getattr__(name):
    from ember.nn._registry import lookup

    return lookup("functionals", name, __name__)
