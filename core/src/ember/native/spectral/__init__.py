"""Spectral ops: the discrete Fourier transforms (fft.py over primitives.py, and the
helpers of frequencies.py) and the short-time transform (stft.py).

PyTorch counterpart: aten/src/ATen/native/SpectralOps.cpp (v2.13).
"""
