"""Reading an image file given to ``ember predict``: its size is checked before a pixel is
decoded, and a file Pillow cannot read is one ``ZooError`` naming it.

PyTorch counterpart: torchvision/io/image.py's ``decode_image`` and
torchvision/datasets/folder.py's ``pil_loader`` (v0.28), which open any file with
Pillow and let its exceptions through. ember reads files a user names on the command
line, so a malformed one (text named ``.png``, an empty or truncated file, a broken
checksum, a decompression bomb) is a user's mistake, reported in one line.

# NOTE [ The image size limit ]
# Pillow reads an image's header on ``Image.open`` and decodes its pixels only on
# ``load`` (or ``convert``), so the width and height are known before any memory is
# spent on pixels: a 236 KB PNG may declare 9000 x 9000 pixels, 243 MB decoded and
# gigabytes once a detector runs on it. Each task says how many pixels it accepts,
# ``Task.max_image_pixels``: a classifier resizes the image to its input first, so it
# accepts ``MAX_IMAGE_PIXELS`` (4096 x 4096, 48 MiB decoded as RGB); a detector runs at
# the image's own size and accepts fewer (ember_zoo_yolo's task: 2048 x 2048, about
# 400 MB at the peak of yolo_nano's forward). Pillow's own guard,
# ``Image.MAX_IMAGE_PIXELS`` (about 89 million pixels, a warning, then an error at
# twice that), is a global that ember leaves alone; its warning is turned into the
# same refusal here.
"""

import struct
import warnings
import zlib

from ember.zoo.errors import ZooError

MAX_IMAGE_PIXELS = 4096 * 4096

# What Pillow's decoders raise on a malformed file (Pillow 10-13: SyntaxError for a bad
# PNG checksum, EOFError or OSError for a truncated file, struct.error and zlib.error
# from header and stream parsing, ValueError for an oversized text chunk).
_DECODE_ERRORS = (OSError, SyntaxError, EOFError, ValueError, IndexError, struct.error, zlib.error)


def open_image(path, mode, max_pixels=MAX_IMAGE_PIXELS):
    """The image at ``path`` decoded and converted to Pillow ``mode`` ("L", "RGB"); a
    ``ZooError`` naming the file when it is not an image Pillow reads, or when it has
    more than ``max_pixels`` pixels (checked before decoding: NOTE [ The image size limit ])."""
    from PIL import Image

    with warnings.catch_warnings():
        warnings.simplefilter("error", Image.DecompressionBombWarning)
        try:
            with Image.open(path) as image:
                _check_size(path, image.size, max_pixels)
                return image.convert(mode)
        except (Image.DecompressionBombError, Image.DecompressionBombWarning):
            raise ZooError(f"{str(path)!r} is too large: more than {max_pixels:,} pixels "
                           f"(the limit of this model's predict)") from None
        except _DECODE_ERRORS as exc:
            if isinstance(exc, (ZooError, FileNotFoundError, IsADirectoryError, PermissionError)):
                raise  # (a size refusal, or a missing file, which the CLI reports in its own words)
            raise ZooError(f"cannot read the image {str(path)!r}: {_reason(exc)}") from None


def _check_size(path, size, max_pixels):
    width, height = size
    if width * height > max_pixels:
        raise ZooError(f"{str(path)!r} is {width} x {height} = {width * height:,} pixels, more than this model's "
                       f"predict accepts ({max_pixels:,}); resize it first")
    if width == 0 or height == 0:
        raise ZooError(f"cannot read the image {str(path)!r}: it has no pixels ({width} x {height})")


def _reason(exc):
    from PIL import UnidentifiedImageError

    if isinstance(exc, UnidentifiedImageError):
        return "not an image Pillow can read (an unknown format, or a damaged file)"
    return " ".join(str(exc).split()) or type(exc).__name__
