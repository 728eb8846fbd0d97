"""``ember.fft``: discrete Fourier transforms, PyTorch's ``torch.fft``.

PyTorch counterpart: torch/fft/__init__.py (v2.13).

The functions live in ember/native/spectral/ (fft.py: the transforms, built from the
three primitives of primitives.py; frequencies.py: the helpers); this module only
names them.
"""

from ember.native.spectral.fft import (
                                       fft,
                                       fft2,
                                       fftn,
                                       hfft,
                                       hfft2,
                                       hfftn,
                                       ifft,
                                       ifft2,
                                       ifftn,
                                       ihfft,
                                       ihfft2,
                                       ihfftn,
                                       irfft,
                                       irfft2,
                                       irfftn,
                                       rfft,
                                       rfft2,
                                       rfftn,
)
from ember.native.spectral.frequencies import fftfreq, fftshift, ifftshift, rfftfreq

__all__ = ["fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2", "rfftn", "irfftn",
           "hfft", "ihfft", "hfft2", "ihfft2", "hfftn", "ihfftn", "fftfreq", "rfftfreq", "fftshift", "ifftshift"]
