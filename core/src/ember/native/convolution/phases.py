"""An NCHW strided convolution's input gradient as a few stride-1 products summed by
phase (the "sub-pixel" split), instead of one product and col2im.

PyTorch counterpart: aten/src/ATen/native/ConvolutionMM2d.cpp (v2.13), whose
``slow_conv2d`` input gradient is one product and col2im at every stride; the split
by phases is ember's (NOTE below), used by ember/native/convolution/convolution.py.
"""

from functools import lru_cache

# NOTE [ The strided input adjoint by phases ]
# At stride s, the input pixel at padded position ``s*q + r`` (phase r) only receives
# taps i with ``i*d = s*a + r``, from output ``q - a``. So each phase of the input's
# gradient is a sum of stride-1 products, one per tap, with the output gradient shifted
# by ``a`` (the "sub-pixel" split). Laid out channel-major on a grid (O, N*Qh*Qw) with
# a zero margin in front and zero rows and columns past the output, every shift is a
# flat offset: a plain 2-D view BLAS reads directly, no copy. Taps with the same shift
# share one product (their weights stacked), so 3x3 at stride 2 makes 4 products, not
# a column matrix 9x the image that col2im then adds back with strided writes; the
# phases are summed with contiguous adds and interleaved into the image once.
# Measured on the small CNN's stride-2 layers, batch 32, one thread: 32->64 at 32x32,
# 7.2 ms against 9.5; 64->128 at 16x16, 6.2 against 6.7.


def input_adjoint_by_phases(xp, grad, weight, g):
    """F(., W)^T grad for an NCHW convolution of one group, by phases (NOTE [ The
    strided input adjoint by phases ]): ``(N, O, OH, OW)`` -> ``(N, C, H, W)``."""
    plan = phase_plan(g)
    O = grad.shape[1]
    grid = xp.zeros((O, plan.margin + plan.F), dtype=grad.dtype)
    target = grid[:, plan.margin:].reshape(O, g.N, plan.Qh, plan.Qw)
    target[:, :, :g.OH, :g.OW] = grad.transpose(1, 0, 2, 3)
    taps_first = weight.transpose(2, 3, 1, 0)  # (kh, kw, C, O): tap (i, j)'s W^T
    phases = {}
    for start, taps, rows, columns in plan.shares:
        stacked = xp.ascontiguousarray(taps_first[rows, columns]).reshape(-1, O)  # (taps*C, O)
        products = xp.matmul(stacked, grid[:, start:start + plan.F]).reshape(len(taps), g.C, plan.F)
        for product, (_, _, phase) in zip(products, taps):
            if phase in phases:
                phases[phase] += product
            else:
                phases[phase] = product
    image = plan.empty_image(xp, (g.N, g.C, g.H, g.W), len(phases), grad.dtype)
    for phase, plane in phases.items():
        (h0, q0, rows), (w0, p0, columns) = plan.placements[phase]
        grid = plane.reshape(g.C, g.N, plan.Qh, plan.Qw)[:, :, q0:q0 + rows, p0:p0 + columns]
        image[:, :, h0::g.sh, w0::g.sw] = grid.transpose(1, 0, 2, 3)
    return image


@lru_cache(maxsize=256)
def phase_plan(g):
    """The :class:`PhasePlan` of a geometry, made once per geometry (NOTE [ A
    convolution's fixed cost, cached per shape ] in ember/native/convolution/convolution.py)."""
    return PhasePlan(g)


class PhasePlan:
    """Where the taps of a strided convolution's input adjoint land (NOTE [ The strided
    input adjoint by phases ]): the grid of ``Qh x Qw`` cells per image (a phase's rows
    and columns) behind a ``margin`` of zero cells, and per shared shift the grid's first
    cell and the taps ``(i, j, phase)`` it serves."""

    def __init__(self, g):
        self.g = g
        self.shifts_h = [divmod(i * g.dh, g.sh) for i in range(g.kh)]  # tap i reads s*(o + a) + r
        self.shifts_w = [divmod(j * g.dw, g.sw) for j in range(g.kw)]
        reach_h, reach_w = self.shifts_h[-1][0], self.shifts_w[-1][0]
        self.Qh = max(g.OH + reach_h, -(-(g.H + g.ph) // g.sh))
        self.Qw = max(g.OW + reach_w, -(-(g.W + g.pw) // g.sw))
        self.F = g.N * self.Qh * self.Qw
        self.margin = reach_h * self.Qw + reach_w
        # per shared shift: its first cell, its taps and their (rows, columns) indices
        self.shares = [(start, taps, [i for i, _, _ in taps], [j for _, j, _ in taps])
                       for start, taps in self.products()]
        phases = {phase for _, taps in self.products() for _, _, phase in taps}
        self.placements = {phase: self.placement(phase) for phase in phases}

    def products(self):
        """``(first grid cell, taps)`` per shift, the taps as ``(i, j, (r, t))``."""
        by_shift = {}
        for i, (a_i, r_i) in enumerate(self.shifts_h):
            for j, (a_j, r_j) in enumerate(self.shifts_w):
                by_shift.setdefault((a_i, a_j), []).append((i, j, (r_i, r_j)))
        return [(self.margin - (a_i * self.Qw + a_j), taps) for (a_i, a_j), taps in by_shift.items()]

    def placement(self, phase):
        """Per dim, (first image index, first grid cell, count) of a phase's pixels."""
        g = self.g
        placed = []
        for r, s, p, size in zip(phase, (g.sh, g.sw), (g.ph, g.pw), (g.H, g.W)):
            first = (r - p) % s
            placed.append((first, (first + p) // s, len(range(first, size, s))))
        return placed

    def empty_image(self, xp, shape, phases, dtype):
        """The image to interleave into: zeros where some phase has no tap."""
        make = xp.empty if phases == self.g.sh * self.g.sw else xp.zeros
        return make(shape, dtype=dtype)
