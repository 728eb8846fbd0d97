"""ember: a small deep-learning framework that mirrors PyTorch's design.

PyTorch counterpart: torch/__init__.py (v2.13).

``import ember`` loads the core only; plugins (the ``cpu`` backend among them) are
discovered on first need (see ember/plugins/manager.py).
"""

from ember import dtypes as _dtype_module
from ember.memory_format import channels_last, channels_last_3d, contiguous_format, memory_format, preserve_format
from ember.dtypes import (bfloat16, bool_ as bool, complex64, complex128, dtype, float8_e4m3fn, float8_e4m3fnuz,
                         float8_e5m2, float8_e5m2fnuz, float8_e8m0fnu, float16, float32, float64, get_default_dtype,
                         int8, int16, int32, int64, promote_types, set_default_dtype, uint8, uint16, uint32, uint64)
from ember.type_info import finfo, iinfo
from ember.device import device
from ember.tensor import Size, Tensor
from ember._tensor_str import set_printoptions
from ember.float32_matmul_precision import get_float32_matmul_precision, set_float32_matmul_precision
from ember import legacy_tensor_types
from ember.legacy_tensor_types import TYPED_CLASSES as _TYPED_CLASSES
from ember import tensor_methods as _tensor_methods  # attaches the op methods to Tensor
from ember import autograd
from ember.autograd import enable_grad, inference_mode, is_grad_enabled, no_grad, set_grad_enabled
from ember.autograd import is_anomaly_check_nan_enabled, is_anomaly_enabled, is_inference_mode_enabled
from ember.autograd.inference import is_inference
from ember.random import (Generator, default_generator, get_rng_state, initial_seed, manual_seed, seed,
                          set_rng_state)
from ember.native.factory import (arange, as_tensor, asarray, empty, empty_like, eye, from_numpy, frombuffer, full,
                                  full_like, linspace, logspace, ones, ones_like, rand, rand_like, randint,
                                  randint_like, randn, randn_like, randperm, scalar_tensor, tensor, zeros, zeros_like)
from ember.native.pointwise.binary import (add, div, divide, floor_divide, fmod, mul, multiply, remainder, rsub, sub,
                                           subtract, true_divide)
from ember.native.pointwise.binary_functions import arctan2, atan2, float_power, fmax, fmin, lerp, maximum, minimum, pow
from ember.native.pointwise.unary import (abs, absolute, acos, arccos, arcsin, arctan, asin, atan, ceil, clamp,
                                          clamp_max, clamp_min, clip, cos, cosh, erf, erfc, erfinv, exp, exp2, expm1,
                                          fix, floor, frac, log, log1p, log2, log10, nan_to_num, neg, negative,
                                          reciprocal, relu, round, rsqrt, sigmoid, sign, sgn, sin, sinh, sqrt, square,
                                          tan, tanh, trunc)
from ember.native.pointwise.comparison import (allclose, bitwise_and, bitwise_not, bitwise_or, bitwise_xor, eq, equal,
                                               ge, greater, greater_equal, gt, isclose, isfinite, isinf, isnan,
                                               isneginf, isposinf, le, less, less_equal, logical_and, logical_not,
                                               logical_or, logical_xor, lt, ne, not_equal)
from ember.native.reduction.reduction import (all, any, count_nonzero, logsumexp, mean, norm, prod, std, std_mean, sum,
                                              var, var_mean)
from ember.native.reduction.extremes import amax, amin, argmax, argmin, max, min
from ember.native.softmax import _softmax_backward_data, cumprod, cumsum, log_softmax, softmax
from ember.native.shape.views import (adjoint, as_strided, flatten, movedim, moveaxis, narrow, permute, reshape, select,
                                      squeeze, swapaxes, swapdims, t, transpose, unflatten, unsqueeze)
from ember.native.shape.splitting import chunk, dsplit, hsplit, split, tensor_split, unbind, vsplit
from ember.native.shape.shape import (atleast_1d, atleast_2d, atleast_3d, broadcast_shapes, broadcast_tensors,
                                      broadcast_to, cat, column_stack, concat, concatenate, dstack, flip, fliplr,
                                      flipud, hstack, repeat_interleave, roll, stack, tile, vstack)
from ember.native.indexing.indexing import (argwhere, gather, index_add, index_put, index_select, masked_fill,
                                            masked_select, nonzero, scatter, scatter_add, take_along_dim, where)
from ember.native.linalg.products import (addmm, addmv, baddbmm, bmm, dot, einsum, ger, inner, matmul, mm, mv, outer,
                                          vdot)
from ember.native.sorting import argsort, kthvalue, msort, sort, topk
from ember.native.copy import clone
from ember.native.random.distributions import bernoulli, multinomial, normal
from ember.native.random.counts import binomial, poisson
from ember.native.random.gamma import _dirichlet_grad, _sample_dirichlet, _standard_gamma, _standard_gamma_grad
from ember.native.shape.diagonal import diag, diag_embed, diagonal
from ember.native.shape.triangular import tril, triu
from ember.native.reduction.median import median, mode, nanmedian
from ember.native.reduction.nan_reductions import aminmax, nanmean, nansum
from ember.native.pointwise.copysign import copysign
from ember.native.pointwise.xlogy import xlogy
from ember.native.pointwise.shifts import bitwise_left_shift, bitwise_right_shift
from ember.native.pointwise.trigonometric import acosh, arccosh, arcsinh, arctanh, asinh, atanh, deg2rad, rad2deg, sinc
from ember.native.pointwise.gamma import digamma, igamma, igammac, lgamma, mvlgamma, polygamma
from ember.native.pointwise.bessel import i0
from ember.native.pointwise.log_space import logaddexp, logaddexp2, logit
from ember.native.pointwise.float_bits import frexp, ldexp, nextafter, signbit
from ember.native.pointwise.integer_math import gcd, lcm
from ember.native.pointwise.binary_functions import heaviside, hypot
from ember.native.linalg.vander import vander
from ember.native.linalg.lu import lu_unpack
from ember.native.linalg.lu import lu_solve_legacy as lu_solve
from ember.native.linalg.lu import lu_with_pivots as lu
from ember.native.linalg.cholesky_solve import cholesky_inverse, cholesky_solve
from ember.native.linalg.triangular_solve import triangular_solve
from ember.native.linalg.householder import geqrf, ormqr
from ember.native.linalg.lowrank import pca_lowrank, svd_lowrank
from ember.native.indexing.masked_scatter import masked_scatter
from ember.native.linalg.aliases import cholesky, det, inverse, logdet, matrix_exp, pinverse, qr, slogdet, svd
from ember.native.pointwise.ternary import addcdiv, addcmul
from ember.native.complex import (angle, complex, conj, conj_physical, imag, is_complex, is_conj, is_neg, isreal,
                                  polar, real, resolve_conj, resolve_neg, view_as_complex, view_as_real)
from ember._ops import ops
from ember import fft, linalg, signal
from ember.signal.windows import bartlett_window, blackman_window, hamming_window, hann_window, kaiser_window
from ember.native.spectral.stft import istft, stft
from ember import special
from ember import func
from ember.func import vmap  # torch.vmap, the same function as torch.func.vmap
from ember import masked
from ember import cpu, cuda
from ember import accelerator, backends
from ember import amp
from ember import multiprocessing
from ember.amp import autocast, get_autocast_dtype, is_autocast_enabled
from ember.native.shape.pixel_shuffle import pixel_shuffle, pixel_unshuffle
from ember.native.shape.meshgrid import meshgrid
from ember.native.shape.unfold import unfold_copy
from ember.native.unique import unique, unique_consecutive
from ember.native.distance import cdist
from ember.native.summary_ops import bincount, histc
from ember.native.histogram import histogram, histogramdd
from ember.native.bucketization import bucketize, searchsorted
from ember.native.reduction.quantile import nanquantile, quantile
from ember.native.reduction.segment_reduce import _segment_reduce, segment_reduce
from ember.native.reduction.hash_tensor import hash_tensor
from ember.native.linalg.scaled_mm import _scaled_mm, _scaled_mm_v2
from ember.native.reduction.cumulative import cummax, cummin, diff, logcumsumexp
from ember.native.reduction.renorm import renorm
from ember.native.itertools import cartesian_prod, combinations
from ember.native.shape.block_diag import block_diag
from ember.native.shape.chunk_cat import _chunk_cat
from ember.native.indexing.masked_index import _unsafe_masked_index, _unsafe_masked_index_put_accumulate
from ember.native.shape.shape import rot90
from ember.native.shape.diagonal import trace
from ember.native.shape.triangular import tril_indices, triu_indices
from ember.native.indexing.take_put import put, take
from ember.native.indexing.index_fill_copy import index_copy, index_fill
from ember.native.indexing.scatter_reduce import index_reduce, scatter_reduce
from ember.native.linalg.cross import cross
from ember.native.linalg.products import addbmm, addr
from ember.native.linalg.tensor_products import chain_matmul, kron, tensordot
from ember.native.distance import cosine_similarity, pairwise_distance, pdist
from ember.native.grid_sampler import grid_sampler, grid_sampler_2d, grid_sampler_3d
from ember.native.upsampling import _upsample_bilinear2d_aa
from ember.native.shape.view_copies import (alias_copy, as_strided_copy, diagonal_copy, expand_copy, narrow_copy,
                                            permute_copy, split_with_sizes_copy, squeeze_copy, t_copy, transpose_copy,
                                            unbind_copy, unsqueeze_copy, view_copy)
from ember.native.shape.view_scatters import as_strided_scatter, diagonal_scatter, select_scatter, slice_scatter
from ember.native.shape.views import ravel
from ember.native.shape.splitting import split_with_sizes, unsafe_chunk, unsafe_split
from ember.native.shape.diagonal import diagflat
from ember.native.pointwise.unary import positive
from ember.tensor_methods import fill, resize_as_, zero_
from ember.native.isin import isin
from ember.native.integration import cumulative_trapezoid, trapezoid, trapz
from ember.native.correlation import corrcoef, cov
from ember.native.gradient import gradient
from ember.native.distance import dist
from ember.native.indexing.unravel_index import unravel_index
from ember.native.indexing.indexing import nonzero_static
from ember.native.padding import constant_pad_nd
from ember.native.factory import empty_permuted, empty_strided
from ember.layout import (jagged, layout, sparse_bsc, sparse_bsr, sparse_coo, sparse_csc, sparse_csr,  # noqa: F401
                          strided)
from ember.native.sparse.sparse_tensor import sparse_coo_tensor
from ember.native.sparse.csr import sparse_csr_tensor
from ember.native.sparse.sparse_math import mm as spmm
from ember import sparse
from ember.device import get_default_device, set_default_device
from ember.parallel import get_num_interop_threads, get_num_threads, set_num_interop_threads, set_num_threads
from ember.deterministic import (are_deterministic_algorithms_enabled, get_deterministic_debug_mode,
                                 is_deterministic_algorithms_warn_only_enabled, set_deterministic_debug_mode,
                                 use_deterministic_algorithms)
from ember.serialization import load, load_safetensors, save, save_safetensors
from ember import plugins as _plugins

cuda.amp, cpu.amp = amp.amp_aliases.cuda_amp, amp.amp_aliases.cpu_amp  # torch.cuda.amp / torch.cpu.amp spellings

_plugins._register_builtins()

from ember import nn  # noqa: E402  (after the plugins: ember.nn looks names up in their catalogues)
from ember import data, utils  # noqa: E402  (ember.data resolves names through the plugins too)
from ember import optim  # noqa: E402  (likewise: ember.optim.<Name> comes from the optimizers catalogue)
from ember import zoo  # noqa: E402  (models come from the models catalogue)
from ember import fx, jit, onnx  # noqa: E402  (graph capture and export: ember/fx, ember/jit, ember/onnx)
from ember import profiler  # noqa: E402  (ops timed at the dispatcher)
import ember.autograd.profiler  # noqa: E402  (its older spelling, ember.autograd.profiler)
from ember import hub  # noqa: E402  (hubconf.py repositories and checkpoint URLs, from the cache)
from ember import ao, quantization  # noqa: E402  (torch.ao's paths, forwarding to ember-quantization)
from ember import distributions  # noqa: E402  (uses ember.nn.functional)
from ember.compiler import compile  # noqa: E402  (ember.compile, like torch.compile)

# torch's math constants (torch/__init__.py: ``from math import e, inf, nan, pi``) and NumPy's
# ``newaxis`` spelling of None.
from math import e, inf, nan, pi  # noqa: E402
newaxis = None

# NOTE [ Legacy tensor types ] (ember/legacy_tensor_types.py)
(FloatTensor, DoubleTensor, HalfTensor, BFloat16Tensor, LongTensor, IntTensor, ShortTensor, CharTensor, ByteTensor,
 BoolTensor) = (_TYPED_CLASSES[name] for name in (
    "FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "LongTensor", "IntTensor", "ShortTensor",
    "CharTensor", "ByteTensor", "BoolTensor"))

float = float32
double = float64
half = float16
long = int64
int = int32
short = int16
cfloat = complex64
cdouble = complex128

from ember import version  # noqa: E402
from ember.version import __version__  # noqa: E402


def is_tensor(obj):
    return isinstance(obj, Tensor)


def numel(input):
    return input.numel()


def result_type(tensor1, tensor2):
    keys = []
    for x in (tensor1, tensor2):
        if isinstance(x, Tensor):
            keys.append((2 if x.ndim else 1, x.dtype))
        else:
            keys.append((0, _dtype_module.scalar_dtype(_dtype_module.python_number(x))))
    return _dtype_module.result_type_from_keys(tuple(keys))


def can_cast(from_, to):
    return _dtype_module.can_cast(from_, to)


def is_floating_point(input):
    return input.is_floating_point()


def is_nonzero(input):
    """``bool(input)`` for a one-element tensor; refuses others, as torch does."""
    return input.is_nonzero()


def is_storage(obj):
    from ember.storage import UntypedStorage

    return isinstance(obj, UntypedStorage)


def typename(obj):
    """``'ember.FloatTensor'`` for a tensor (its legacy type name), the qualified class
    name otherwise (``'ember.nn.modules.linear.Linear'``, ``'int'``)."""
    if isinstance(obj, Tensor):
        return obj.type()
    cls = obj if isinstance(obj, type) else type(obj)
    module = "" if cls.__module__ in ("builtins", "__builtin__") else cls.__module__ + "."
    return module + cls.__qualname__


def set_default_tensor_type(t):  # noqa: F811 (torch's parameter name; shadows ember.t here only)
    """The default dtype from a legacy type (``ember.DoubleTensor``) or its name;
    deprecated, as in torch (use ``set_default_dtype``)."""
    import warnings

    warnings.warn("ember.set_default_tensor_type() is deprecated as in torch 2.1+, please use "
                  "ember.set_default_dtype() and ember.set_default_device() as alternatives.", UserWarning,
                  stacklevel=2)
    legacy = legacy_tensor_types
    set_default_dtype(t.dtype if isinstance(t, legacy.tensortype) else legacy.dtype_of_legacy_name(t))


def set_flush_denormal(mode):  # noqa: F811 (torch's parameter name)
    """False: ember cannot set the CPU's flush-to-zero mode (NumPy keeps denormals), so
    it reports the mode as unsupported, as torch does on CPUs without SSE3."""
    return False


# torch's top-level quantization names (torch.quantize_per_tensor, torch.qint8, ...),
# which ember-quantization provides: looked up there on first use (NOTE [ Forwarding modules ]).
_QUANTIZATION_NAMES = ("quantize_per_tensor", "quantize_per_channel", "dequantize", "qint8", "quint8", "qint32",
                       "per_tensor_affine", "per_channel_affine", "per_tensor_symmetric", "per_channel_symmetric")


# torch's top-level normalization ops that return their statistics (torch.native_layer_norm,
# ...), which ember-norm provides, likewise.
_NORM_NAMES = ("native_batch_norm", "_native_batch_norm_legit", "_batch_norm_with_update", "native_layer_norm",
               "native_group_norm")


def __getattr__(name):
    if name in _QUANTIZATION_NAMES:
        from ember.plugins.forwarding import FORWARDERS

        return FORWARDERS["ember.ao.quantization"].get("ember", name)
    if name in _NORM_NAMES:
        from ember.plugins.forwarding import NORM, Imported

        return Imported("ember_norm.native", NORM).get("ember", name)
    raise AttributeError(f"module 'ember' has no attribute {name!r}")
