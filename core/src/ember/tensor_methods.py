"""Attach the op functions to ``Tensor`` as methods, Python operators and in-place forms.

PyTorch counterpart: torch/_tensor.py (the Python operators) and the generated
``TensorBase`` methods of torch/csrc/autograd/generated/python_variable_methods.cpp
(v2.13).

Most ``ember.<op>(input, ...)`` functions take the tensor first, so the method is the
function itself. An in-place method ``op_`` computes ``op`` and writes the result into
``self`` (see NOTE [ In-place ops are out-of-place ops plus a write ]).
"""

import numpy as np

from ember import dtypes
from ember.autograd.grad_mode import grad_state
from ember.dtypes import python_number
from ember.native import complex, copy, correlation, distance, factory, histogram, softmax, sorting, summary_ops, unique
from ember.native.indexing import index_fill_copy, indexing, masked_scatter, scatter_reduce, take_put
from ember.native.linalg import aliases as linalg_aliases
from ember.native.linalg import cholesky_solve as linalg_cholesky_solve
from ember.native.linalg import cross, tensor_products
from ember.native.linalg import householder as linalg_householder
from ember.native.linalg import lu as linalg_lu
from ember.native.linalg import products as linalg
from ember.native.linalg import triangular_solve as linalg_triangular_solve
from ember.native.pointwise import (
    bessel,
    binary,
    binary_functions,
    comparison,
    copysign,
    float_bits,
    gamma,
    integer_math,
    log_space,
    shifts,
    trigonometric,
    unary,
    xlogy,
)
from ember.native.pointwise import (
    ternary as pointwise,
)
from ember.native.random import distributions
from ember.native.reduction import (
    cumulative,
    extremes,
    hash_tensor,
    median,
    nan_reductions,
    quantile,
    reduction,
    renorm,
)
from ember.native.shape import (
    diagonal,
    inplace_views,
    shape,
    splitting,
    triangular,
    unfold,
    view_copies,
    view_scatters,
    views,
)
from ember.native.spectral import stft
from ember.native.support._inplace import check_inplace, fill_overlapping, try_fast_inplace, write_result
from ember.tensor import Tensor

METHODS = {
    binary: ["add", "sub", "subtract", "mul", "multiply", "div", "divide", "true_divide", "floor_divide",
             "remainder", "fmod", "rsub"],
    binary_functions: ["pow", "float_power", "atan2", "arctan2", "maximum", "minimum", "fmax", "fmin", "lerp", "hypot",
                       "heaviside"],
    trigonometric: ["asinh", "acosh", "atanh", "arcsinh", "arccosh", "arctanh", "deg2rad", "rad2deg", "sinc"],
    gamma: ["lgamma", "digamma", "mvlgamma", "igamma", "igammac"],
    bessel: ["i0"],
    log_space: ["logaddexp", "logaddexp2", "logit"],
    float_bits: ["frexp", "ldexp", "nextafter", "signbit"],
    integer_math: ["gcd", "lcm"],
    unary: ["relu", "neg", "negative", "positive", "abs", "absolute", "sign", "sgn", "reciprocal", "exp", "exp2",
            "expm1",
            "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "square", "sin", "cos", "tan", "asin", "acos", "atan",
            "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "sigmoid", "erf", "erfc", "erfinv", "floor",
            "ceil", "trunc", "fix", "round", "frac", "clamp", "clip", "clamp_min", "clamp_max", "nan_to_num"],
    comparison: ["eq", "ne", "lt", "le", "gt", "ge", "not_equal", "less", "less_equal", "greater",
                 "greater_equal", "logical_and", "logical_or", "logical_xor", "logical_not", "bitwise_and",
                 "bitwise_or", "bitwise_xor", "bitwise_not", "isnan", "isinf", "isfinite", "isposinf",
                 "isneginf", "isclose", "allclose", "equal"],
    reduction: ["sum", "mean", "prod", "var", "std", "all", "any", "logsumexp", "norm", "count_nonzero",
                "sum_to_size"],
    extremes: ["amax", "amin", "max", "min", "argmax", "argmin"],
    softmax: ["softmax", "log_softmax", "cumsum", "cumprod"],
    views: ["view", "reshape", "view_as", "reshape_as", "permute", "transpose", "swapaxes", "swapdims", "t",
            "adjoint", "expand", "expand_as", "unsqueeze", "squeeze", "flatten", "unflatten", "narrow", "movedim",
            "moveaxis", "as_strided", "select", "ravel"],
    splitting: ["split", "chunk", "tensor_split", "unbind", "hsplit", "vsplit", "dsplit", "split_with_sizes",
                "unsafe_split", "unsafe_chunk"],
    shape: ["broadcast_to", "flip", "fliplr", "flipud", "roll", "rot90", "repeat", "tile", "repeat_interleave"],
    indexing: ["masked_fill", "masked_select", "gather", "take_along_dim", "scatter", "scatter_add",
               "index_select", "index_add", "index_put", "nonzero", "argwhere", "nonzero_static"],
    linalg: ["matmul", "mm", "bmm", "mv", "addmm", "addmv", "baddbmm", "addbmm", "addr", "outer", "ger", "dot",
             "inner", "vdot"],
    sorting: ["sort", "argsort", "msort", "topk", "kthvalue"],
    copy: ["clone", "contiguous"],
    pointwise: ["addcmul", "addcdiv"],
    diagonal: ["diagonal", "diag", "diag_embed", "trace", "diagflat"],
    view_copies: ["narrow_copy"],
    view_scatters: ["select_scatter", "slice_scatter", "diagonal_scatter", "as_strided_scatter"],
    correlation: ["cov", "corrcoef"],
    distance: ["dist"],
    triangular: ["tril", "triu", "tril_", "triu_"],
    median: ["median", "nanmedian", "mode"],
    nan_reductions: ["nansum", "nanmean", "aminmax"],
    copysign: ["copysign"],
    xlogy: ["xlogy"],
    shifts: ["bitwise_left_shift", "bitwise_right_shift"],
    inplace_views: ["t_", "transpose_", "unsqueeze_", "squeeze_", "as_strided_"],
    masked_scatter: ["masked_scatter", "masked_scatter_"],
    linalg_aliases: ["inverse", "det", "logdet", "slogdet", "matrix_exp", "pinverse", "svd", "cholesky", "qr"],
    stft: ["stft", "istft"],
    complex: ["angle", "conj", "conj_physical", "resolve_conj", "resolve_neg", "is_conj", "is_neg", "isreal"],
    linalg_cholesky_solve: ["cholesky_solve", "cholesky_inverse"],
    linalg_householder: ["geqrf", "ormqr"],
    linalg_triangular_solve: ["triangular_solve"],
    unique: ["unique", "unique_consecutive"],
    unfold: ["unfold"],
    summary_ops: ["bincount", "histc"],
    histogram: ["histogram"],
    quantile: ["quantile", "nanquantile"],
    cumulative: ["cummax", "cummin", "logcumsumexp", "diff"],
    renorm: ["renorm", "renorm_"],
    take_put: ["take", "put"],
    index_fill_copy: ["index_fill", "index_copy"],
    scatter_reduce: ["index_reduce", "scatter_reduce"],
    cross: ["cross"],
    hash_tensor: ["hash_tensor"],
    tensor_products: ["kron"],
}

INPLACE = ["relu", "add", "sub", "mul", "div", "floor_divide", "remainder", "fmod", "pow", "atan2", "lerp", "neg",
           "abs", "conj_physical",
           "sign", "reciprocal", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt",
           "square", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "sigmoid", "erf",
           "erfc", "erfinv", "floor", "ceil", "trunc", "round", "frac", "clamp", "clip", "clamp_min", "clamp_max",
           "nan_to_num", "eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_xor",
           "logical_not", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "masked_fill", "scatter",
           "scatter_add", "index_add", "index_put", "cumsum", "cumprod", "maximum", "minimum", "true_divide",
           "multiply", "subtract", "divide", "copysign", "xlogy", "bitwise_left_shift", "bitwise_right_shift",
           "sgn", "addmm", "addmv", "baddbmm", "asinh", "acosh", "atanh", "arcsinh", "arccosh", "arctanh", "arcsin",
           "arccos", "arctan", "fix", "negative", "absolute", "deg2rad", "rad2deg", "sinc", "hypot", "heaviside",
           "lgamma", "digamma", "polygamma", "mvlgamma", "igamma", "igammac", "i0", "logit", "ldexp", "nextafter",
           "gcd", "lcm", "addr", "put", "index_fill", "index_copy",
           "index_reduce", "scatter_reduce"]

FAST_INPLACE = {"add": "add", "sub": "subtract", "mul": "multiply"}


def _inplace_method(fn, name):
    def method(self, *args, **kwargs):
        check_inplace(self)
        return write_result(self, fn(self, *args, **kwargs))
    return _named(method, name, fn)


def _fast_inplace_method(fn, name, ufunc_name):
    # add_/sub_/mul_: one ufunc call into self when no graph is recorded
    # (NOTE [ The in-place fast path ]); otherwise the general in-place path.
    if ufunc_name == "multiply":
        def method(self, other):
            check_inplace(self)
            if try_fast_inplace(self, ufunc_name, other) is not None:
                return self
            return write_result(self, fn(self, other))
    else:
        def method(self, other, *, alpha=1):
            check_inplace(self)
            if try_fast_inplace(self, ufunc_name, other, alpha) is not None:
                return self
            return write_result(self, fn(self, other, alpha=alpha))
    return _named(method, name, fn)


def _named(method, name, fn):
    method.__name__ = name
    method.__qualname__ = f"Tensor.{name}"
    method.__doc__ = f"In-place version of :meth:`Tensor.{fn.__name__}`."
    return method


def _addbmm_(self, batch1, batch2, *, beta=1, alpha=1):
    # PyTorch's addbmm_ runs as addbmm with self as its out: a self that broadcasts to the
    # product's (n, p) is resized to it first (resize_'s rules: its first elements kept,
    # so the values written are those of the broadcast self; torch reads a column self
    # through a view of the storage it overwrites, so for (n, 1) its values differ).
    check_inplace(self)
    result = linalg.addbmm(self, batch1, batch2, beta=beta, alpha=alpha)
    if tuple(self.shape) != tuple(result.shape):
        self.resize_(tuple(result.shape))
    return write_result(self, result)


def _float_power_(self, exponent):
    # float_power computes in float64, and its in-place form does not narrow the result:
    # the tensor must already be float64 (complex128 in PyTorch).
    if self.dtype != dtypes.float64:
        name = dtypes.SCALAR_TYPE_NAMES[self.dtype.name]
        raise RuntimeError(f"the base given to float_power_ has dtype {name} but the operation's result "
                           "requires dtype Double")
    check_inplace(self)
    return write_result(self, binary_functions.float_power(self, exponent))


def _fill_(self, value):
    check_inplace(self)
    value = python_number(value)  # NOTE [ NumPy scalars are Python numbers ] in dtypes.py
    # through float32 into float16, as torch; its fill kernel refuses an overflow, its
    # one-element shortcut writes inf
    value = dtypes.python_float_as(value, self._data.dtype, check_overflow=self.numel() != 1)
    if not getattr(self._data.flags, "writeable", True) and not isinstance(value, Tensor) and not (
            grad_state.enabled and self._requires_grad):
        # An expanded tensor takes a Python number (not a tensor: that is a copy in PyTorch);
        # NOTE [ Writing into overlapping memory ].
        return fill_overlapping(self, value)
    from ember.native.indexing.indexing import INDEX_PUT, setitem

    if not getattr(self._data.flags, "writeable", True) and not isinstance(value, Tensor):
        # Recorded, into overlapping memory: one value everywhere, so the write is well defined.
        return write_result(self, INDEX_PUT(self, value, key=(Ellipsis,)), uniform=True)

    plain = isinstance(value, Tensor) and value.ndim == 0 and not value.requires_grad and value._fw_grads is None
    setitem(self, Ellipsis, value.item() if plain else value)
    return self


def _zero_(self):
    return _fill_(self, 0)


def fill(input, value):
    """A new tensor like ``input`` holding ``value`` everywhere: ``fill_`` on a clone
    (``input`` gets a zero gradient, a tensor ``value`` the sum of the gradient)."""
    return _fill_(copy.clone(input), value)


def zero_(input):
    """``input.zero_()``, as the function ``torch.zero_``."""
    return _zero_(input)


def resize_as_(input, the_template, *, memory_format=None):
    """``input.resize_as_(the_template)``, as the function ``torch.resize_as_``."""
    return input.resize_as_(the_template, memory_format=memory_format)


def _new_empty_strided(self, size, stride, *, dtype=None, device=None, requires_grad=False, layout=None,
                       pin_memory=False):
    return factory.empty_strided(size, stride, dtype=dtype or self.dtype, device=device or self.device,
                                 requires_grad=requires_grad)


def _new_factory(factory_fn):
    def method(self, *size, dtype=None, device=None, requires_grad=False):
        return factory_fn(*size, dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad)
    return method


def _new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False):
    return factory.full(size, fill_value, dtype=dtype or self.dtype, device=device or self.device,
                        requires_grad=requires_grad)


def _new_tensor(self, data, *, dtype=None, device=None, requires_grad=False):
    return factory.tensor(data, dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad)


def _where(self, condition, other):
    """``x.where(condition, y)``: ``x`` where ``condition`` holds, else ``y`` (PyTorch's
    method order: the tensor is the value, not the condition)."""
    return indexing.where(condition, self, other)


def _reflected(fn):
    def method(self, other):
        if other.__class__ is np.ndarray:  # NOTE [ NumPy arrays as operator operands ]
            return NotImplemented
        return fn(other, self)
    return method


def _rdiv(self, other):
    # PyTorch's Tensor.__rdiv__ (torch/_tensor.py): `2 / x` is x.reciprocal() * 2, which
    # rounds differently from a division (and records ReciprocalBackward0, MulBackward0).
    # (0 / x at x == 0 is inf * 0: NaN, as in PyTorch, without NumPy's warning.) The
    # operator, not `mul`: a NumPy array `other` is then multiplied by NumPy, as in PyTorch.
    return unary.call_quietly(self._device.backend.xp, lambda: unary.reciprocal(self) * other)


# NOTE [ NumPy arrays as operator operands ]
# PyTorch's Tensor operators turn the TypeError their parser raises for a NumPy array
# (``x * np.array(2.)``, any number of dims) into NotImplemented. Python then asks the
# array's reflected operator, which computes with NumPy's rules on ``np.asarray(x)`` (a
# float32 tensor times a float64 0-d array is float64), and NumPy hands the result to
# ``Tensor.__array_wrap__``, which makes it a tensor again. The functions (``ember.mul``)
# and the comparisons < <= > >= still refuse the array, as PyTorch's do; ``x == array``
# reads the array as a tensor (ember/native/pointwise/comparison.py ``tensor_eq``). In
# ``array * x`` the array asks first and defers to the tensor, whose reflected operator
# refuses it, as PyTorch's does.


def _numpy_computes(operator):
    def method(self, other):
        if other.__class__ is np.ndarray:  # NOTE [ NumPy arrays as operator operands ]
            return NotImplemented
        return operator(self, other)
    method.__name__ = getattr(operator, "__name__", "operator")
    return method


def _matmul_reflected(self, other):
    return linalg.matmul(other, self)


# x += y and the like: the in-place method (NumPy arrays: NOTE [ NumPy arrays as operator operands ]).
INPLACE_OPERATORS = {"__iadd__": "add_", "__isub__": "sub_", "__imul__": "mul_", "__itruediv__": "div_",
                     "__ifloordiv__": "floor_divide_", "__imod__": "remainder_", "__ipow__": "pow_",
                     "__iand__": "bitwise_and_", "__ior__": "bitwise_or_", "__ixor__": "bitwise_xor_",
                     "__ilshift__": "bitwise_left_shift_", "__irshift__": "bitwise_right_shift_"}


def attach():
    for module, names in METHODS.items():
        for name in names:
            setattr(Tensor, name, getattr(module, name))
    Tensor.polygamma = gamma.polygamma_method  # the method puts the tensor first: x.polygamma(n)
    for name in INPLACE:
        setattr(Tensor, name + "_", _inplace_method(getattr(Tensor, name), name + "_"))
    for name, ufunc_name in FAST_INPLACE.items():
        setattr(Tensor, name + "_", _fast_inplace_method(getattr(Tensor, name), name + "_", ufunc_name))
    Tensor.where = _where
    Tensor.lu = linalg_lu.lu_with_pivots
    Tensor.lu_solve = linalg_lu.lu_solve_legacy
    Tensor.copy_ = copy.copy_
    Tensor.addcmul_ = pointwise.addcmul_
    Tensor.addcdiv_ = pointwise.addcdiv_
    Tensor.lerp_ = pointwise.lerp_  # the general in-place path plus a fast path for optimizers
    Tensor.float_power_ = _float_power_
    Tensor.addbmm_ = _addbmm_
    Tensor.fill_ = _fill_
    Tensor.zero_ = _zero_
    Tensor.masked_fill_ = indexing.masked_fill_
    Tensor.uniform_ = distributions.uniform_
    Tensor.normal_ = distributions.normal_
    Tensor.random_ = distributions.random_
    Tensor.bernoulli_ = distributions.bernoulli_
    Tensor.bernoulli = distributions.bernoulli
    Tensor.exponential_ = distributions.exponential_
    Tensor.cauchy_ = distributions.cauchy_
    Tensor.log_normal_ = distributions.log_normal_
    Tensor.geometric_ = distributions.geometric_
    Tensor.multinomial = distributions.multinomial
    _attach_sparse()
    Tensor.new_zeros = _new_factory(factory.zeros)
    Tensor.new_ones = _new_factory(factory.ones)
    Tensor.new_empty = _new_factory(factory.empty)
    Tensor.new_full = _new_full
    Tensor.new_empty_strided = _new_empty_strided
    Tensor.new_tensor = _new_tensor
    Tensor.__getitem__ = indexing.getitem
    Tensor.__setitem__ = indexing.setitem

    Tensor.__radd__ = binary.add
    Tensor.__add__ = _numpy_computes(binary.add)
    Tensor.__sub__ = _numpy_computes(binary.sub)
    Tensor.__rsub__ = _reflected(binary.sub)
    Tensor.__rmul__ = binary.mul
    Tensor.__mul__ = _numpy_computes(binary.mul)
    Tensor.__truediv__ = _numpy_computes(binary.div)
    Tensor.__rtruediv__ = Tensor.__rdiv__ = _rdiv
    Tensor.__floordiv__ = _numpy_computes(binary.floor_divide)
    Tensor.__rfloordiv__ = _reflected(binary.floor_divide)
    Tensor.__mod__ = _numpy_computes(binary.remainder)
    Tensor.__rmod__ = _reflected(binary.remainder)
    Tensor.__pow__ = _numpy_computes(binary_functions.pow)
    Tensor.__rpow__ = _reflected(binary_functions.pow)
    Tensor.__matmul__ = _numpy_computes(linalg.matmul)
    Tensor.__rmatmul__ = _matmul_reflected
    Tensor.__neg__ = unary.neg
    Tensor.__pos__ = unary.positive
    Tensor.__abs__ = unary.abs
    Tensor.__invert__ = comparison.tensor_invert
    Tensor.__rand__ = comparison.bitwise_and
    Tensor.__ror__ = comparison.bitwise_or
    Tensor.__rxor__ = comparison.bitwise_xor
    Tensor.__and__ = _numpy_computes(comparison.bitwise_and)
    Tensor.__or__ = _numpy_computes(comparison.bitwise_or)
    Tensor.__xor__ = _numpy_computes(comparison.bitwise_xor)
    Tensor.__eq__ = comparison.tensor_eq
    Tensor.__ne__ = comparison.tensor_ne
    Tensor.__lt__ = comparison.lt
    Tensor.__le__ = comparison.le
    Tensor.__gt__ = comparison.gt
    Tensor.__ge__ = comparison.ge
    for operator, method in INPLACE_OPERATORS.items():
        setattr(Tensor, operator, _numpy_computes(getattr(Tensor, method)))
    Tensor.__lshift__ = _numpy_computes(shifts.bitwise_left_shift)
    Tensor.__rshift__ = _numpy_computes(shifts.bitwise_right_shift)
    Tensor.__rlshift__ = shifts.reflected_left_shift
    Tensor.__rrshift__ = shifts.reflected_right_shift


def _attach_sparse():
    # The sparse-layout methods a strided tensor has (ember/native/sparse/): conversions
    # to a sparse layout, and torch's errors for the sparse-only accessors.
    from ember.native.sparse import csr, sparse_tensor

    Tensor.to_sparse = Tensor.to_sparse_coo = sparse_tensor.to_sparse
    Tensor.to_sparse_csr = csr.to_sparse_csr
    Tensor.to_dense = sparse_tensor.dense_to_dense
    Tensor.coalesce = sparse_tensor.coalesce
    Tensor.is_coalesced = sparse_tensor.dense_is_coalesced
    Tensor.indices = sparse_tensor.dense_indices
    Tensor.values = sparse_tensor.dense_values
    Tensor.sparse_dim = sparse_tensor.dense_sparse_dim
    Tensor.dense_dim = sparse_tensor.dense_dense_dim
    Tensor._nnz = sparse_tensor.dense_nnz
    _attach_sparse_operators(sparse_tensor.SparseTensor)


def _attach_sparse_operators(SparseTensor):
    # What a sparse COO tensor computes (ember/native/sparse/sparse_math.py); every
    # other op stops at its missing strided data.
    from ember.native.sparse import sparse_math

    SparseTensor.__add__ = SparseTensor.__radd__ = SparseTensor.add = sparse_math.add
    SparseTensor.__mul__ = SparseTensor.__rmul__ = SparseTensor.mul = sparse_math.mul
    SparseTensor.__neg__ = lambda self: sparse_math.mul(self, -1)
    SparseTensor.__sub__ = lambda self, other: sparse_math.add(self, other, alpha=-1)
    SparseTensor.__matmul__ = SparseTensor.matmul = sparse_math.matmul
    SparseTensor.__rmatmul__ = lambda self, other: sparse_math.matmul(other, self)
    SparseTensor.mm = SparseTensor.spmm = sparse_math.mm
    SparseTensor.sum = lambda self, dim=None, keepdim=False, dtype=None: sparse_math.sum(self, dim, dtype)


attach()
