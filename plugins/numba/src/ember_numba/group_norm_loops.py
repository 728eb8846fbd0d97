"""The compiled loops of ember_numba/group_norm.py over contiguous (N, C, L) arrays: the
normalization and the backward of each (sample, group).

PyTorch counterpart: aten/src/ATen/native/cpu/group_norm_kernel.cpp (v2.13).
"""


from ember_numba.ahead_of_time import ahead_of_time
from ember_numba.jit import jit


@ahead_of_time("void({t}[:, :, ::1], {t}[::1], {t}[::1], {t}[:, ::1], {t}[:, ::1], {t}[:, :, ::1])")
@jit
def normalize_groups(x, weight, bias, mean, rstd, out):
    # y = (x - mean) * rstd * weight + bias = x * scale + shift, scale and shift per
    # (sample, channel), as torch computes it.
    samples, channels, length = x.shape
    per_group = channels // mean.shape[1]
    for n in range(samples):
        for c in range(channels):
            group = c // per_group
            scale = rstd[n, group] * weight[c]
            shift = bias[c] - mean[n, group] * scale
            for i in range(length):
                out[n, c, i] = x[n, c, i] * scale + shift


@ahead_of_time("void({t}[:, :, ::1], {t}[:, :, ::1], {t}[::1], {t}[:, "
               "::1], {t}[:, ::1], {t}[:, :, ::1], {t}[::1], {t}[::1])")
@jit
def backward_groups(g, x, weight, mean, rstd, grad_input, grad_weight, grad_bias):
    # Per (sample, group), with c = x - mean, xhat = c * rstd and h = g * weight[channel]:
    # first the sums of g and g * c per channel (no cancellation, as c is centered),
    # then grad_input = rstd * (h - mean(h) - xhat * mean(h * xhat))
    #                 = g * (rstd * weight) + c * b + d  with b, d per group.
    samples, channels, length = x.shape
    groups = mean.shape[1]
    per_group = channels // groups
    zero, count = x.dtype.type(0), x.dtype.type(per_group * length)
    for n in range(samples):
        for group in range(groups):
            m, r = mean[n, group], rstd[n, group]
            sum_h = zero
            sum_h_xhat = zero
            for c in range(group * per_group, (group + 1) * per_group):
                sum_g = zero
                sum_gc = zero
                for i in range(length):
                    sum_g += g[n, c, i]
                    sum_gc += g[n, c, i] * (x[n, c, i] - m)
                grad_bias[c] += sum_g
                grad_weight[c] += sum_gc * r
                sum_h += sum_g * weight[c]
                sum_h_xhat += sum_gc * r * weight[c]
            b = -r * r * (sum_h_xhat / count)
            d = -r * (sum_h / count)
            for c in range(group * per_group, (group + 1) * per_group):
                a = r * weight[c]
                for i in range(length):
                    grad_input[n, c, i] = g[n, c, i] * a + (x[n, c, i] - m) * b + d
