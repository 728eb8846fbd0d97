"""``ember.nn.functional``: the functional forms of the layers.

PyTorch counterpart: torch/nn/functional.py (v2.13). The core defines the functional
forms of its own layers here; names provided by plugins (``relu``'s relatives,
``batch_norm``, ``cross_entropy``, ...) are found through the "functionals" catalogue
(``ember_register_functionals``) by the module-level ``__getattr__`` below.
"""

from ember.native.pointwise import unary as _unary
from ember.plugins import forwarding as _forwarding

# --- dense layers, embedding, dropout, attention, distances ----------------------
# (ember/native/linear.py, embedding.py, dropout.py, attention.py, distance.py)
# isort: split
from ember.native.attention import multi_head_attention_forward, scaled_dot_product_attention  # noqa: F401
from ember.native.distance import cosine_similarity, normalize, pairwise_distance, pdist  # noqa: F401
from ember.native.dropout import (  # noqa: F401
    alpha_dropout,
    dropout,
    dropout1d,
    dropout2d,
    dropout3d,
    feature_alpha_dropout,
)
from ember.native.embedding import embedding, one_hot  # noqa: F401
from ember.native.embedding_bag import embedding_bag  # noqa: F401
from ember.native.linear import bilinear, linear  # noqa: F401

# --- end of dense layers, embedding, dropout, attention, distances ---------------

# --- convolution, pooling, padding, folding, interpolation ---------------------------
# (ember/native/convolution/convolution.py, pooling.py, padding.py, fold.py, upsampling.py)
# isort: split
from ember.native.convolution.convolution import (  # noqa: F401
    conv1d,
    conv2d,
    conv3d,
    conv_transpose1d,
    conv_transpose2d,
    conv_transpose3d,
)
from ember.native.fold import fold, unfold  # noqa: F401
from ember.native.grid_sampler import affine_grid, grid_sample  # noqa: F401
from ember.native.padding import pad  # noqa: F401
from ember.native.pooling.fractional_max_pool import fractional_max_pool2d, fractional_max_pool3d  # noqa: F401
from ember.native.pooling.lp_pooling import lp_pool1d, lp_pool2d, lp_pool3d  # noqa: F401
from ember.native.pooling.max_unpooling import max_unpool1d, max_unpool2d, max_unpool3d  # noqa: F401
from ember.native.pooling.pooling import (  # noqa: F401
    adaptive_avg_pool1d,
    adaptive_avg_pool2d,
    adaptive_avg_pool3d,
    adaptive_max_pool1d,
    adaptive_max_pool2d,
    avg_pool1d,
    avg_pool2d,
    max_pool1d,
    max_pool2d,
)
from ember.native.pooling.pooling3d import (  # noqa: F401
    adaptive_max_pool3d,
    avg_pool3d,
    max_pool3d,
)
from ember.native.shape.channel_shuffle import channel_shuffle  # noqa: F401
from ember.native.shape.pixel_shuffle import pixel_shuffle, pixel_unshuffle  # noqa: F401
from ember.native.upsampling import interpolate, upsample, upsample_bilinear, upsample_nearest  # noqa: F401


# As in torch, the *_with_indices forms take return_indices and return the indices whatever it says.
def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    return max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices=True)


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    return max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices=True)


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=False):
    return adaptive_max_pool2d(input, output_size, return_indices=True)

# --- end of convolution, pooling, padding, folding, interpolation --------------------


def relu(input, inplace=False):
    """``max(input, 0)``, the core's ``aten::relu`` op; ``inplace=True`` overwrites ``input``
    (torch.nn.functional.relu's signature; ember-activation's ``relu`` is the same function)."""
    return input.relu_() if inplace else _unary.relu(input)


__getattr__, __dir__ = _forwarding.forwarder(__name__)  # NOTE [ Forwarding modules ]
