"""``ember.nn.utils``: gradient clipping, flat parameter vectors, pruning (``prune``),
parametrizations (``parametrize``, ``parametrizations``) and the legacy ``weight_norm``
and ``spectral_norm`` hooks.

PyTorch counterpart: torch/nn/utils/__init__.py (v2.13). ember leaves out ``stateless``.
"""

from ember.nn.utils import parametrizations, parametrize, prune, rnn  # submodules, as in torch
from ember.nn.utils.clip_grad import clip_grad_norm_, clip_grad_value_, get_total_norm
from ember.nn.utils.convert_parameters import parameters_to_vector, vector_to_parameters
from ember.nn.utils.spectral_norm import remove_spectral_norm, spectral_norm
from ember.nn.utils.weight_norm import remove_weight_norm, weight_norm

__all__ = ["clip_grad_norm_", "clip_grad_value_", "get_total_norm", "parameters_to_vector",
           "vector_to_parameters", "prune", "rnn", "parametrize", "parametrizations", "weight_norm",
           "remove_weight_norm", "spectral_norm", "remove_spectral_norm"]
