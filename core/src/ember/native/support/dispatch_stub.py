"""How native code reaches a kernel a plugin may replace: the array kernels that a
convolution calls many times per step (im2col, col2im, the Winograd transforms) are
ops, and the convolution looks up once per call which kernel serves its arrays.

PyTorch counterpart: aten/src/ATen/native/DispatchStub.h (``DECLARE_DISPATCH`` in the
operator's file, ``REGISTER_DISPATCH`` in a compiled kernel file, and the stub's call,
which picks the kernel for the device type) (v2.13).

# NOTE [ Dispatch stubs ]
# ATen's operators call some of their inner loops through a DispatchStub: a function
# pointer per device type, which a kernel file compiled for the machine's instruction
# set fills in. ember's counterpart is an ``Op`` that is never called through
# ``dispatch`` (no autograd, no type promotion: its arguments are arrays): its generic
# kernel is the NumPy code, the path for CuPy arrays and for a cpu no plugin serves,
# and a plugin registers a cpu kernel for it (``Op.register_kernel``, as ember-numba's
# hook does). The caller asks :func:`kernel_of` once per convolution, never per image
# or per tile, so no per-op path gains anything.
"""


def kernel_of(op, xp):
    """The kernel ``op`` runs on ``xp``'s arrays: the one registered for the cpu (by a
    plugin, or the generic one) for NumPy's, the generic one for any other namespace."""
    return op.kernel_for("cpu") if xp.__name__ == "numpy" else op.generic
