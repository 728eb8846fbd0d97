"""Spectral ops: the discrete Fourier transforms, windows and the short-time transform
(ATen's native/SpectralOps.cpp, TensorFactories' windows)."""
