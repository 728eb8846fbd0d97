"""The autocast state the dispatcher reads: which device types cast, to what, and
each op's casting policy.

PyTorch counterpart: the Autocast dispatch keys and aten/src/ATen/autocast_mode.cpp
(the per-op policies of ``TORCH_LIBRARY_IMPL(aten, AutocastCPU, m)`` and of the CUDA
lists, ``cached_cast``) (v2.13). See NOTE [ Autocast at the dispatcher ].
"""

# NOTE [ Autocast at the dispatcher ]
# PyTorch runs autocast as a dispatch key above autograd: before an op on the list
# reaches its kernel, its floating inputs are cast (float64 ones are left alone), and
# the casts are recorded by autograd like any other op. In ember autocast is a mode of
# the dispatcher (NOTE [ Modes at the dispatcher ] in ember/dispatch_modes.py): while a
# region is open, every op runs through ``run_in_modes``, which calls
# ``autocast_state.cast(op, inputs)`` before ``dispatch``; with no region open, ops pay
# nothing for it. The policies, by op name:
#   lower_precision: every float32 or other reduced input goes to the autocast dtype
#       (products, convolutions, attention: the ops that gain from half precision);
#   fp32: every reduced-precision input goes to float32 (losses, reductions,
#       pooling and padding kinds that lose accuracy in half precision);
#   promote: all floating inputs go to float32 if one is, else stay in the autocast
#       dtype (cat, stack); float16 meeting a bfloat16 region first is PyTorch's error.
# float64 inputs are never cast (PyTorch's is_eligible).
# An op on a list runs its insides without autocast (``suspended``), as PyTorch's
# autocast kernel excludes autocast while it runs the op; a composite on no list (einsum,
# whose pairwise products are bmm) meets the policies at its inner ops, as PyTorch's
# CompositeImplicitAutograd ops do.
# Within a region, casts of leaf tensors that require grad (the weights) are cached,
# as PyTorch does, so a weight used by many ops is cast once. A composite op written in
# Python whose name is on a list (prelu, l1_loss) casts its inputs by that policy first
# (``composite_inputs``). An op outside aten may bring an autocast kernel of its own
# (``ember.library.register_autocast_kernel``, as torchvision registers its ops at the
# Autocast keys): it runs in place of the op, with autocast suspended, casting with
# ``cached_cast`` and calling the op itself.

LOWER_PRECISION = frozenset((
    "convolution", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "conv_tbc",
    "bmm", "mm", "linalg_vecdot", "baddbmm", "addmm", "_addmm_activation", "addbmm", "linear", "matmul", "prelu",
    "scaled_dot_product_attention", "_native_multi_head_attention",
    # PyTorch's CPU LSTM (mkldnn_rnn_layer) is on the list: ember's fused LSTM kernels are its counterpart
    "_lstm_layer", "_thnn_fused_lstm_cell"))

FP32 = frozenset((
    "avg_pool3d", "binary_cross_entropy", "grid_sampler", "polar", "prod", "quantile", "nanquantile", "stft", "cdist",
    "grid_sampler_2d", "_grid_sampler_2d_cpu_fallback", "grid_sampler_3d", "trace", "view_as_complex", "cholesky",
    "cholesky_inverse", "cholesky_solve", "inverse", "lu_solve", "orgqr", "ormqr", "pinverse", "max_pool3d",
    "max_unpool2d", "max_unpool3d", "adaptive_avg_pool3d", "reflection_pad1d", "reflection_pad2d", "replication_pad1d",
    "replication_pad2d", "replication_pad3d", "mse_loss", "cosine_embedding_loss", "nll_loss", "nll_loss2d",
    "hinge_embedding_loss", "poisson_nll_loss", "smooth_l1_loss", "cross_entropy_loss", "cross_entropy", "l1_loss",
    "huber_loss", "margin_ranking_loss", "soft_margin_loss", "triplet_margin_loss", "multi_margin_loss", "ctc_loss",
    "kl_div", "multilabel_margin_loss", "binary_cross_entropy_with_logits", "fft_fft", "fft_ifft", "fft_fft2",
    "fft_ifft2", "fft_fftn", "fft_ifftn", "fft_rfft", "fft_irfft", "fft_rfft2", "fft_irfft2", "fft_rfftn", "fft_irfftn",
    "fft_hfft", "fft_ihfft", "linalg_cond", "linalg_matrix_rank", "linalg_solve", "linalg_cholesky", "linalg_svdvals",
    "linalg_eigvals", "linalg_eigvalsh", "linalg_inv", "linalg_householder_product", "linalg_tensorinv",
    "linalg_tensorsolve", "fake_quantize_per_tensor_affine", "geqrf", "_lu_with_info", "qr", "svd", "triangular_solve",
    "fractional_max_pool2d", "fractional_max_pool3d", "adaptive_max_pool3d", "multilabel_margin_loss_forward",
    "linalg_qr", "linalg_cholesky_ex", "linalg_svd", "linalg_eig", "linalg_eigh", "linalg_lstsq", "linalg_inv_ex"))

PROMOTE = frozenset(("stack", "cat", "index_copy"))

POLICY = {**{name: "lower_precision" for name in LOWER_PRECISION}, **{name: "fp32" for name in FP32},
          **{name: "promote" for name in PROMOTE}}


class AutocastState:
    """``enabled``: is any device type autocasting (asked by kernels that check dtypes);
    ``dtypes``: device type -> the lower-precision dtype while it autocasts."""

    def __init__(self):
        self.enabled = False
        self.dtypes = {}
        self.cache = {}  # id(leaf weight) -> (weight, dtype, its cast)
        self.cache_enabled = True

    def cast(self, op, inputs):
        """``inputs`` with the casts ``op``'s policy asks for on their device type."""
        return self.cast_by_name(op.name, inputs)

    def cast_by_name(self, name, inputs):
        """``inputs`` cast by the policy of the op called ``name``: also for composites
        written in Python, which have no Op of their own (see ``composite_inputs``)."""
        policy = POLICY.get(name)
        if policy is None:
            return inputs
        device_type = None
        for x in inputs:
            if hasattr(x, "_device"):
                device_type = x._device.type
                break
        target = self.dtypes.get(device_type)
        if target is None:
            return inputs
        from ember import dtypes

        eligible = _ELIGIBLE
        if policy == "lower_precision":
            return tuple(self._cast_one(x, target, eligible) for x in inputs)
        if policy == "fp32":
            return tuple(self._cast_one(x, dtypes.float32, dtypes.REDUCED_FLOATS) for x in inputs)
        widest = _prioritize(inputs, target)
        return tuple(self._cast_one(x, widest, eligible) for x in inputs)

    def _cast_one(self, x, target, eligible):
        """``x`` cast to ``target`` when it is a tensor whose NumPy dtype is in
        ``eligible``; anything else unchanged."""
        if not hasattr(x, "_device") or x._data.dtype not in eligible or x._data.dtype == target.np:
            return x
        cacheable = self.cache_enabled and x._requires_grad and x.grad_fn is None
        if cacheable:
            hit = self.cache.get(id(x))
            if hit is not None and hit[0] is x and hit[1] is target:
                return hit[2]
        cast = x.to(target)
        if cacheable:
            self.cache[id(x)] = (x, target, cast)
        return cast


def cached_cast(dtype, x):
    """``x`` cast to ``dtype`` if it is a floating tensor other than float64 (PyTorch's
    ``is_eligible``), through the region's cache of cast weights; anything else (None,
    integers, float64) unchanged. PyTorch's ``at::autocast::cached_cast``, for the
    autocast kernels ops register (``ember.library.register_autocast_kernel``)."""
    return autocast_state._cast_one(x, dtype, _ELIGIBLE)


def composite_inputs(name, *inputs):
    """The inputs of a composite op (a Python function of ember ops, e.g. ``l1_loss``)
    cast by the autocast policy of ``name``, as PyTorch casts its one kernel's inputs;
    unchanged (one test) when autocast is off."""
    if not autocast_state.enabled:
        return inputs
    return autocast_state.cast_by_name(name, inputs)


class suspended:
    """Context manager: no op autocasts inside it. PyTorch's autocast kernel for an op
    on a list casts the inputs, then runs the op with autocast excluded: a composite
    that ember writes in Python for such an op (scaled_dot_product_attention, lstsq)
    runs its insides in this region, so its products are not cast again."""

    def __enter__(self):
        from ember.dispatch_modes import modes

        self._saved = autocast_state.dtypes
        autocast_state.dtypes = {}
        autocast_state.enabled = False
        modes.set_autocast(None)
        return self

    def __exit__(self, *exc):
        from ember.dispatch_modes import modes

        autocast_state.dtypes = self._saved
        autocast_state.enabled = bool(self._saved)
        modes.set_autocast(autocast_state.cast if autocast_state.enabled else None)
        return False


def _prioritize(inputs, target):
    """The dtype a ``promote`` op casts its eligible inputs to, as ``at::autocast::prioritize``:
    float32 once any input is float32, else ``target`` while every input is ``target``;
    another reduced float (float16 in a bfloat16 region) before any float32 is PyTorch's error."""
    from ember import dtypes

    current = target
    for x in inputs:
        if not hasattr(x, "_device") or x._data.dtype not in _ELIGIBLE:
            continue
        if current is dtypes.float32:
            return current
        if x._data.dtype == dtypes.float32.np:
            current = dtypes.float32
        elif x._data.dtype != target.np:
            raise RuntimeError("Unexpected floating ScalarType in at::autocast::prioritize")
    return current


def _eligible():
    # PyTorch's is_eligible: floating tensors other than float64 take part in autocast
    from ember import dtypes

    return frozenset(d.np for d in dtypes.ALL_DTYPES if d.is_floating_point and d is not dtypes.float64)


_ELIGIBLE = _eligible()
autocast_state = AutocastState()
