"""The short-time Fourier transform and its inverse: ``stft`` and ``istft``.

PyTorch counterpart: aten/src/ATen/native/SpectralOps.cpp (``stft``, ``istft``) and
torch/functional.py (their Python front, which pads for ``center``) (v2.13).

Both are compositions of ember ops, so their gradients come from the ops':
``stft`` pads the signal (``center``), cuts it into frames ``hop_length`` apart,
multiplies each by the window and transforms it (``rfft``, or ``fft`` for a complex
signal or ``onesided=False``); ``istft`` transforms each frame back, multiplies it by
the window again, adds the frames where they overlap (``F.fold``, the adjoint of
cutting into frames) and divides by the overlapped squared window, which undoes both
window products wherever that sum is nonzero (torch's NOLA check).
"""

import warnings

from ember import dtypes
from ember.native.spectral import fft as spectral


def _window(window, n_fft, win_length, dtype, device):
    """The window as ``n_fft`` samples: ones by default, a shorter one centred."""
    from ember.native.factory import ones

    if win_length <= 0 or win_length > n_fft:
        raise RuntimeError(f"stft: expected 0 < win_length <= n_fft, but got win_length={win_length}")
    if window is None:
        window = ones(win_length, dtype=dtype, device=device)
    elif window.ndim != 1 or window.shape[0] != win_length:
        raise RuntimeError(f"stft: expected a 1D window tensor of size equal to win_length={win_length}, but got "
                           f"window with size {list(window.shape)}")
    if win_length < n_fft:
        from ember.nn.functional import pad

        left = (n_fft - win_length) // 2
        window = pad(window, (left, n_fft - win_length - left))
    return window


def _frames(signal, n_fft, hop_length):
    """``(..., n_frames, n_fft)``: the signal cut into frames ``hop_length`` apart."""
    from ember.native.shape.shape import stack

    count = 1 + (signal.shape[-1] - n_fft) // hop_length
    return stack([signal.narrow(-1, t * hop_length, n_fft) for t in range(count)], dim=-2)


def stft(input, n_fft, hop_length=None, win_length=None, window=None, center=True, pad_mode="reflect",
         normalized=False, onesided=None, return_complex=None, align_to_window=None):
    """The Fourier transform of each ``n_fft``-sample frame of ``input`` (1-D, or 2-D
    with a batch dim), frames ``hop_length`` (``n_fft // 4``) apart: shape
    ``(*batch, n_freq, n_frames)``, ``n_freq = n_fft // 2 + 1`` when ``onesided``.

    >>> import ember
    >>> ember.stft(ember.ones(8), 4, return_complex=True).shape
    ember.Size([3, 9])
    """
    if return_complex is None:
        if not (input.dtype.is_complex or (window is not None and window.dtype.is_complex)):
            raise RuntimeError("stft requires the return_complex parameter be given for real inputs, and will "
                               "further require that return_complex=True in a future PyTorch release.")
        return_complex = True
    if not return_complex:
        warnings.warn("stft with return_complex=False is deprecated. In a future pytorch release, stft will return "
                      "complex tensors for all inputs, and return_complex=False will raise an error.\n"
                      "Note: you can still call torch.view_as_real on the complex output to recover the old "
                      "return format.", UserWarning, stacklevel=2)
    if input.ndim not in (1, 2):
        raise RuntimeError(f"stft: expected a 1D or 2D tensor, but got {input.ndim}D tensor")
    hop_length = n_fft // 4 if hop_length is None else hop_length
    win_length = n_fft if win_length is None else win_length
    if hop_length <= 0:
        raise RuntimeError(f"stft: expected hop_length > 0, but got hop_length={hop_length}")
    signal = input if input.dtype.is_complex or input.dtype.is_floating_point else input.to(dtypes.get_default_dtype())
    if center:
        from ember.nn.functional import pad

        half = n_fft // 2
        signal = pad(signal.reshape((1,) * (3 - signal.ndim) + tuple(signal.shape)), (half, half),
                     mode=pad_mode).reshape(tuple(signal.shape[:-1]) + (signal.shape[-1] + 2 * half,))
    if n_fft <= 0 or n_fft > signal.shape[-1]:
        raise RuntimeError(f"stft: expected 0 < n_fft <= {signal.shape[-1]}, but got n_fft={n_fft}")
    window = _window(window, n_fft, win_length, signal.dtype.to_real(), signal.device)
    frames = _frames(signal, n_fft, hop_length) * window
    complex_in = signal.dtype.is_complex or window.dtype.is_complex
    onesided = not complex_in if onesided is None else onesided
    norm = "ortho" if normalized else "backward"
    spectrum = spectral.rfft(frames, norm=norm) if onesided else spectral.fft(frames, norm=norm)
    spectrum = spectrum.transpose(-1, -2)
    if not return_complex:
        from ember.native.complex import view_as_real

        return view_as_real(spectrum)
    return spectrum


def _overlap_add(frames, hop_length, length):
    """``(B, n_fft, n_frames)`` frames added into ``(B, length)`` where they overlap."""
    from ember.native.fold import fold

    n_fft = frames.shape[1]
    summed = fold(frames.unsqueeze(1).flatten(1, 2), (1, length), (1, n_fft), stride=(1, hop_length))
    return summed.reshape(frames.shape[0], length)


def istft(input, n_fft, hop_length=None, win_length=None, window=None, center=True, normalized=False,
          onesided=None, length=None, return_complex=False):
    """The inverse of ``stft``: a signal from its frames' spectra (``(*batch, n_freq,
    n_frames)``, complex), by overlap-add of the windowed inverse transforms.

    >>> import ember
    >>> x = ember.arange(16.)
    >>> w = ember.hann_window(8)
    >>> y = ember.istft(ember.stft(x, 8, window=w, return_complex=True), 8, window=w, length=16)
    >>> bool((y - x).abs().max() < 1e-4)
    True
    """
    if not input.dtype.is_complex:
        raise RuntimeError("istft requires a complex-valued input tensor")
    if input.ndim not in (2, 3):
        raise RuntimeError(f"istft: expected a tensor with 2 or 3 dimensions of complex, but got {input.ndim}")
    batched = input.ndim == 3
    spectrum = input if batched else input.unsqueeze(0)
    hop_length = n_fft // 4 if hop_length is None else hop_length
    win_length = n_fft if win_length is None else win_length
    n_frames = spectrum.shape[-1]
    onesided = spectrum.shape[-2] != n_fft if onesided is None else onesided
    expected = n_fft // 2 + 1 if onesided else n_fft
    if spectrum.shape[-2] != expected:
        raise RuntimeError(f"istft: expected the frequency dimension (3rd to the last) of the input tensor to match "
                           f"n_fft / 2 + 1 when onesided=True, but got {spectrum.shape[-2]}")
    if return_complex and onesided:
        raise RuntimeError("istft: cannot have onesided output if window or input is complex")
    window = _window(window, n_fft, win_length, spectrum.dtype.to_real(), spectrum.device)
    norm = "ortho" if normalized else "backward"
    columns = spectrum.transpose(-1, -2)
    if return_complex:
        frames = spectral.ifft(columns, n=n_fft, norm=norm)
    else:  # a real signal reads only the first half of a two-sided spectrum, as torch's
        frames = spectral.irfft(columns.narrow(-1, 0, n_fft // 2 + 1), n=n_fft, norm=norm)
    frames = (frames * window).transpose(-1, -2)  # (B, n_fft, n_frames)
    total = n_fft + hop_length * (n_frames - 1)
    if frames.dtype.is_complex:
        from ember.native.complex import complex as make_complex

        real_part = _overlap_add(frames.real, hop_length, total)
        signal = make_complex(real_part, _overlap_add(frames.imag, hop_length, total))
    else:
        signal = _overlap_add(frames, hop_length, total)
    envelope = _overlap_add((window * window).reshape(1, n_fft, 1).expand(1, n_fft, n_frames), hop_length, total)[0]
    start = n_fft // 2 if center else 0
    end = total - n_fft // 2 if center and length is None else total
    if length is not None:
        end = start + length
    signal, envelope = signal[..., start:min(end, total)], envelope[start:min(end, total)]
    if float(envelope.abs().min()) < 1e-11:
        raise RuntimeError("istft: window overlap add min: 1e-11")
    signal = signal / envelope
    if length is not None and signal.shape[-1] < length:
        from ember.nn.functional import pad

        signal = pad(signal, (0, length - signal.shape[-1]))
    return signal if batched else signal[0]
