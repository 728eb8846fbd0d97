"""``isin``: which elements of one tensor appear among the elements of another.

PyTorch counterpart: ``isin`` in aten/src/ATen/native/TensorCompare.cpp and its CPU
kernels (a sort-based and a loop-based algorithm, chosen by size) (v2.13).

Both operands are compared in their promoted dtype; NaN is never found (it equals
nothing, itself included). The reference kernel is NumPy's ``isin``, which sorts the
concatenation when that is cheaper, as PyTorch's does. Not differentiable: the result
is bool.
"""

from ember import dtypes
from ember.dispatcher import Op


def _isin_kernel(xp, elements, test_elements, *, invert):
    common = xp.result_type(elements, test_elements)
    found = xp.isin(elements.astype(common, copy=False), test_elements.astype(common, copy=False).reshape(-1))
    return xp.logical_not(found) if invert else found


ISIN = Op("aten::isin", _isin_kernel, None)


def isin(elements, test_elements, *, assume_unique=False, invert=False):
    """A bool tensor of ``elements``' shape: True where the element equals one of
    ``test_elements`` (False there with ``invert``). Either may be a Python number.
    ``assume_unique`` is a speed hint in PyTorch; the result does not depend on it.

    >>> import ember
    >>> ember.isin(ember.tensor([1, 2, 3]), ember.tensor([2, 5]))
    tensor([False,  True, False])
    """
    from ember.tensor import Tensor

    reference = elements if isinstance(elements, Tensor) else test_elements
    elements, test_elements = _tensor(elements, reference), _tensor(test_elements, reference)
    for operand in (elements, test_elements):
        if operand.dtype is dtypes.bool_ or operand.dtype.is_complex:
            from ember.native.support._inplace import _type_name

            raise RuntimeError(f"Unsupported input type encountered for isin(): {_type_name(operand.dtype)}")
    return ISIN(elements, test_elements, invert=bool(invert))


def _tensor(value, reference):
    """A Python number as a 0-d tensor of the dtype it promotes to with ``reference``."""
    import ember
    from ember.native.factory import scalar_tensor

    if isinstance(value, ember.Tensor):
        return value
    return scalar_tensor(value, dtype=ember.result_type(reference, value), device=reference.device)
