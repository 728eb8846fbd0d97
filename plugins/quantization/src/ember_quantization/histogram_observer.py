"""HistogramObserver: choose the activation range that minimises the L2 quantization error.

PyTorch counterpart: ``HistogramObserver`` in torch/ao/quantization/observer.py (v2.13),
the activation observer of torch's default x86/fbgemm qconfig.

The observer keeps a 2048-bin histogram of everything it has seen over a running
``[min_val, max_val]``; when a batch widens the range, the old histogram is upsampled
16x and re-binned onto the new range. ``calculate_qparams`` then shrinks the range from
whichever end holds less mass, bin by bin, while the estimated error of quantizing the
histogram onto 256 levels keeps falling (the L2 norm of the distance from each source
bin to the centre of the destination bin it lands in), and maps the chosen range to
scale and zero point like MinMaxObserver.

Everything runs on the host in float32, reproducing torch's arithmetic where the result
depends on it: histogram edges are torch's ``linspace`` (each half computed from its own
end with a single rounding), bins are found by searching those edges (torch's ``histc``),
and scalar comparisons happen in float32.
"""

import math
import warnings

import numpy as np

import ember
from ember_quantization.dtypes import per_tensor_affine, per_tensor_symmetric, quint8
from ember_quantization.observer import FLOAT32_EPS, UniformQuantizationObserverBase

f32 = np.float32


def torch_linspace(start, end, steps):
    """float32 ``torch.linspace``: the first half from ``start``, the second from ``end``, each rounded once."""
    start, end = f32(start), f32(end)
    step = f32((end - start) / f32(steps - 1)) if steps > 1 else f32(0)
    index = np.arange(steps)
    low = (np.float64(start) + np.float64(step) * index).astype(f32)
    high = (np.float64(end) - np.float64(step) * (steps - 1 - index)).astype(f32)
    return np.where(index < steps // 2, low, high)


def torch_histc(x, bins, low, high):
    """float32 ``torch.histc``: counts per bin of ``linspace(low, high, bins + 1)``, ``high`` in the last bin."""
    x = x[(x >= low) & (x <= high)]
    if high == low:  # torch widens an empty range by one on each side
        low, high = f32(low - 1), f32(high + 1)
    edges = torch_linspace(low, high, bins + 1)
    index = np.clip(np.searchsorted(edges, x, side="right") - 1, 0, bins - 1)
    return np.bincount(index, minlength=bins).astype(f32)


class HistogramObserver(UniformQuantizationObserverBase):
    """Per-tensor qparams from a running histogram and an L2 search over the clipping range."""

    def __init__(self, bins=2048, dtype=quint8, qscheme=per_tensor_affine, reduce_range=False, quant_min=None,
                 quant_max=None, factory_kwargs=None, eps=FLOAT32_EPS, is_dynamic=False, **kwargs):
        if qscheme not in (per_tensor_affine, per_tensor_symmetric):
            raise NotImplementedError("HistogramObserver's qscheme only support per_tensor_symmetric and "
                                      "per_tensor_affine.")
        if is_dynamic:
            raise NotImplementedError("HistogramObserver doesn't support dynamic quantization")
        super().__init__(dtype, qscheme, reduce_range, quant_min, quant_max, factory_kwargs, eps, is_dynamic)
        self.bins = bins
        self.register_buffer("histogram", ember.zeros(bins))
        self.register_buffer("min_val", ember.tensor(float("inf")))
        self.register_buffer("max_val", ember.tensor(float("-inf")))
        self.dst_nbins = 2 ** (8 if self.dtype.qmax < 2 ** 8 else 32)
        self.upsample_rate = 16  # upsampling before re-binning keeps the old mass where it was

    # --- recording ---------------------------------------------------------------------
    def forward(self, x_orig):
        if x_orig.numel() == 0:
            return x_orig
        x = x_orig.detach().to(ember.float32).numpy().reshape(-1)
        if np.isinf(x).any():
            warnings.warn("torch.inf detected in input tensor, ignoring input", stacklevel=2)
            x = x[~np.isinf(x)]
            if x.size == 0:
                return x_orig
        x_min, x_max = f32(x.min()), f32(x.max())
        current_min, current_max = f32(self.min_val.item()), f32(self.max_val.item())
        if math.isinf(current_min) or math.isinf(current_max):
            self._store(torch_histc(x, self.bins, x_min, x_max), x_min, x_max)
            return x_orig
        new_min, new_max = min(current_min, x_min), max(current_max, x_max)
        update = torch_histc(x, self.bins, new_min, new_max)
        histogram = self.histogram.numpy()
        if new_min == current_min and new_max == current_max:
            self._store(histogram + update, new_min, new_max)
        else:
            self._store(update + self._rebinned(histogram, current_min, current_max, new_min, new_max),
                        new_min, new_max)
        return x_orig

    def _store(self, histogram, low, high):
        self.histogram = ember.tensor(histogram.astype(f32))
        self.min_val, self.max_val = ember.tensor(f32(low)), ember.tensor(f32(high))

    def _rebinned(self, histogram, orig_min, orig_max, new_min, new_max):
        """The old histogram moved onto ``[new_min, new_max]`` (torch's ``_combine_histograms``)."""
        if orig_min == orig_max:  # all the old mass sat on one value
            return torch_histc(np.array([orig_min], dtype=f32), self.bins, new_min, new_max) * histogram.sum()
        rate = self.upsample_rate
        fine = np.repeat(histogram, rate) / f32(rate)
        bin_size = f32((orig_max - orig_min) / f32(self.bins * rate))
        centres = torch_linspace(orig_min, orig_max, self.bins * rate + 1)[:-1] + f32(0.5) * bin_size
        boundaries = torch_linspace(new_min, new_max, self.bins + 1)
        buckets = np.clip(np.searchsorted(boundaries, centres, side="right") - 1, 0, self.bins - 1)
        return np.bincount(buckets, weights=fine, minlength=self.bins).astype(f32)

    # --- the search -------------------------------------------------------------------------
    def calculate_qparams(self):
        if math.isinf(self.min_val.item()) and math.isinf(self.max_val.item()):
            warnings.warn("must run observer before calling calculate_qparams. Returning default scale and "
                          "zero point ", stacklevel=2)
            return ember.tensor([1.0]), ember.tensor([0])
        if self.bins != len(self.histogram):
            raise AssertionError("The number of bins in histogram should be equal to the number of bins supplied "
                                 "while making this observer")
        new_min, new_max = self._non_linear_param_search()
        return self._calculate_qparams(ember.tensor(new_min), ember.tensor(new_max))

    def _non_linear_param_search(self):
        """Shrink [min, max] one bin at a time from its lighter end while the L2 error falls."""
        histogram = self.histogram.numpy()
        low, high = f32(self.min_val.item()), f32(self.max_val.item())
        bin_width = f32((high - low) / f32(self.bins))
        total = float(histogram.sum(dtype=f32))
        cumulative = np.cumsum(histogram, dtype=f32)
        alpha, beta, step = 0.0, 1.0, 1e-5
        start_bin, end_bin = 0, self.bins - 1
        norm_min = float("inf")
        while alpha < beta:
            next_alpha, next_beta = alpha + step, beta - step
            left, right = start_bin, end_bin
            while left < end_bin and cumulative[left] < f32(next_alpha * total):
                left += 1
            while right > start_bin and cumulative[right] > f32(next_beta * total):
                right -= 1
            next_start, next_end = start_bin, end_bin
            if (left - start_bin) > (end_bin - right):
                next_start, alpha = left, next_alpha
            else:
                next_end, beta = right, next_beta
            if next_start == start_bin and next_end == end_bin:
                continue
            norm = self._quantization_error(histogram, next_start, next_end)
            if norm > norm_min:
                break
            norm_min, start_bin, end_bin = norm, next_start, next_end
        return f32(low + bin_width * f32(start_bin)), f32(low + bin_width * f32(end_bin + 1))

    def _quantization_error(self, histogram, start_bin, end_bin):
        """L2 error of mapping the bins of [start_bin, end_bin] onto ``dst_nbins`` levels (torch's estimate)."""
        bin_width = (self.max_val.item() - self.min_val.item()) / self.bins
        dst_width = bin_width * (end_bin - start_bin + 1) / self.dst_nbins
        if dst_width == 0.0:
            return 0.0
        begin = (np.arange(self.bins) - start_bin).astype(f32) * f32(bin_width)
        end = begin + f32(bin_width)
        dst_of_begin = np.clip(np.floor(begin / f32(dst_width)), 0, self.dst_nbins - 1).astype(f32)
        dst_of_end = np.clip(np.floor(end / f32(dst_width)), 0, self.dst_nbins - 1).astype(f32)
        density = histogram / f32(bin_width)
        half = f32(dst_width / 2)

        def l2(delta_begin, delta_end):
            return density * ((delta_end * delta_end * delta_end - delta_begin * delta_begin * delta_begin) / f32(3))

        norm = l2(begin - (dst_of_begin + f32(0.5)) * f32(dst_width), np.full(self.bins, half, dtype=f32))
        norm = norm + (dst_of_end - dst_of_begin - f32(1)) * l2(-half, half)
        norm = norm + l2(-half, end - (dst_of_end * f32(dst_width) + half))
        return float(norm.astype(f32).sum(dtype=f32))

    def extra_repr(self):
        return f"min_val={self.min_val}, max_val={self.max_val}"


__all__ = ["HistogramObserver"]
