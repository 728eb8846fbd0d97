"""``ember.nn.utils``: gradient clipping, flat parameter vectors and pruning (``prune``).

PyTorch counterpart: torch/nn/utils/__init__.py (v2.13). ember leaves out
weight/spectral norm, stateless and parametrizations.
"""

from ember.nn.utils import prune, rnn  # ember.nn.utils.prune and .rnn, as in torch
from ember.nn.utils.clip_grad import clip_grad_norm_, clip_grad_value_, get_total_norm
from ember.nn.utils.convert_parameters import parameters_to_vector, vector_to_parameters

__all__ = ["clip_grad_norm_", "clip_grad_value_", "get_total_norm", "parameters_to_vector",
           "vector_to_parameters", "prune", "rnn"]
