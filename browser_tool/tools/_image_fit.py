"""Sizing images so a model accepts them: long edge, total pixels and encoded bytes capped.

The hot path is a screenshot that already fits: its size is read from the header and its bytes
are returned untouched, with no decode. Only an image over a limit is decoded (with Pillow),
scaled once, and re-encoded; JPEG is the last resort when the bytes are still too many.
"""

from __future__ import annotations

import importlib
import io
import math
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from PIL import Image

from .._errors import ToolError
from .._settings import Settings
from ._image_header import SUPPORTED_FORMATS, image_size, is_heif, pil_format_for

__all__ = ["FittedImage", "ImageLimits", "describe_fit", "fit_image", "read_image_file"]

# Refuse to decode more than this, whatever the limits: 64 Mpx is 256 MB as RGBA. Pillow's own
# bomb check (Image.MAX_IMAGE_PIXELS) is honoured too when set lower; checking first, from the
# header, means its DecompressionBombWarning is never raised.
_MAX_DECODE_PIXELS = 64 * 1024 * 1024
_MAX_FILE_BYTES = 128 * 1024 * 1024
_JPEG_QUALITIES = (85, 70, 55, 40)
_SHRINK_STEPS = 6


@dataclass(frozen=True)
class ImageLimits:
    """What a model accepts: longest edge and total pixels after scaling, and encoded bytes."""

    max_long_edge: int = 1568
    max_pixels: int = 1_150_000
    max_bytes: int = 5 * 1024 * 1024

    @classmethod
    def from_settings(cls, settings: Settings) -> ImageLimits:
        """The limits the operator set (`BROWSER_TOOL_IMAGE_MAX_*`)."""
        return cls(
            settings.image_max_long_edge, settings.image_max_pixels, settings.image_max_bytes
        )


@dataclass(frozen=True)
class FittedImage:
    """An image that fits its limits; `scale` is width / original_width (1.0 when untouched)."""

    data: bytes
    media_type: str
    width: int
    height: int
    original_width: int
    original_height: int
    scale: float


def describe_fit(fitted: FittedImage) -> str:
    """The original size, and how the image was scaled if it was, in words for the model."""
    size = f"{fitted.original_width}x{fitted.original_height}"
    if fitted.scale == 1.0 and (fitted.width, fitted.height) == (
        fitted.original_width,
        fitted.original_height,
    ):
        return size
    return (
        f"{size}, sent scaled to {fitted.width}x{fitted.height} "
        f"(scale factor {fitted.scale:.3f}) to fit the model's image limits"
    )


def fit_image(data: bytes, limits: ImageLimits | None = None) -> FittedImage:
    """Return `data` scaled and re-encoded as needed to fit `limits` (default `ImageLimits()`).

    An image within all limits comes back as the very same bytes, undecoded. Otherwise it is
    decoded, scaled by one factor (aspect kept) and re-encoded in its own format (a GIF's first
    frame becomes a PNG); if still over `max_bytes` it becomes a JPEG of falling quality and
    size. Raises `ToolError` for unsupported or corrupt data, a declared size too large to
    decode safely, or an image that cannot be brought under `max_bytes`.
    """
    limits = limits or ImageLimits()
    media_type, width, height = image_size(data)
    if _scale_for(width, height, limits) == 1.0 and len(data) <= limits.max_bytes:
        return FittedImage(data, media_type, width, height, width, height, 1.0)
    image = _decode(data, media_type, width, height, limits)
    return _fit_decoded(image, media_type, (width, height), limits)


def read_image_file(path: Path, limits: ImageLimits | None = None) -> FittedImage:
    """Read the image at `path` and fit it to `limits`, as `fit_image` does.

    HEIC/HEIF is read when the optional `pillow_heif` module is installed. Raises `ToolError`
    when the file is missing, a directory, unreadable, too large, or not a supported image.
    """
    limits = limits or ImageLimits()
    data = _read_file(path)
    try:
        if is_heif(data):
            image = _decode_heif(data)
            return _fit_decoded(image, "image/heif", image.size, limits)
        return fit_image(data, limits)
    except ToolError as exc:
        raise ToolError(f"{exc} (file: {path})") from exc


def _read_file(path: Path) -> bytes:
    try:
        # O_NONBLOCK: opening a FIFO must not hang the call; fstat then refuses it anyway.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise ToolError(f"Image file not found: {path}") from None
    except OSError as exc:
        raise ToolError(f"Cannot read image file {path}: {exc.strerror or exc}") from None
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise ToolError(f"Not an image file: {path} is a directory")
        if not stat.S_ISREG(mode):
            raise ToolError(f"Not an image file: {path} is not a regular file")
        with os.fdopen(fd, "rb", closefd=False) as file:
            data = file.read(_MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise ToolError(f"Cannot read image file {path}: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    if len(data) > _MAX_FILE_BYTES:
        raise ToolError(f"Image file {path} is larger than {_MAX_FILE_BYTES // 2**20} MiB")
    return data


def _scale_for(width: int, height: int, limits: ImageLimits) -> float:
    return min(
        1.0,
        limits.max_long_edge / max(width, height),
        math.sqrt(limits.max_pixels / (width * height)),
    )


def _check_decodable(width: int, height: int) -> None:
    cap = _MAX_DECODE_PIXELS
    if Image.MAX_IMAGE_PIXELS is not None:
        cap = min(cap, Image.MAX_IMAGE_PIXELS)
    if width * height > cap:
        raise ToolError(f"Image is too large to decode: {width}x{height} is over {cap:,} pixels")


def _decode(
    data: bytes, media_type: str, width: int, height: int, limits: ImageLimits
) -> Image.Image:
    _check_decodable(width, height)
    try:
        image = Image.open(io.BytesIO(data), formats=[pil_format_for(media_type)])
        if media_type == "image/jpeg":
            # Let libjpeg scale by 1/2, 1/4 or 1/8 while decoding: much less work and memory.
            scale = _scale_for(width, height, limits)
            image.draft("RGB", (math.ceil(width * scale), math.ceil(height * scale)))
        image.load()  # first frame only, for an animated GIF or WebP
    except (OSError, SyntaxError, ValueError, EOFError, Image.DecompressionBombError) as exc:
        raise ToolError(f"Cannot decode {media_type} image: {exc}") from None
    return image


def _decode_heif(data: bytes) -> Image.Image:
    try:
        # Imported by name so that neither mypy nor the runtime needs the optional package.
        pillow_heif = importlib.import_module("pillow_heif")
    except ImportError:
        raise ToolError(
            f"HEIC/HEIF images need the `pillow-heif` package installed; {SUPPORTED_FORMATS}"
        ) from None
    pillow_heif.register_heif_opener()
    try:
        image = Image.open(io.BytesIO(data))
        _check_decodable(*image.size)
        image.load()
    except (OSError, SyntaxError, ValueError, EOFError, Image.DecompressionBombError) as exc:
        raise ToolError(f"Cannot decode HEIC/HEIF image: {exc}") from None
    return image


def _fit_decoded(
    image: Image.Image, media_type: str, original: tuple[int, int], limits: ImageLimits
) -> FittedImage:
    # `original` comes from the header, not from `image`: a JPEG draft is already smaller.
    original_width, original_height = original
    image = _normalise_mode(image)
    scale = _scale_for(original_width, original_height, limits)
    width, height = _target_size(original_width, original_height, scale, limits)
    if (width, height) != image.size:
        # LANCZOS keeps screenshot text legible; reducing_gap first shrinks by an integer
        # factor with a cheap box filter, so the costly filter only covers the last 2x.
        image = image.resize((width, height), Image.Resampling.LANCZOS, reducing_gap=2.0)
    out_type = "image/png" if media_type in ("image/gif", "image/heif") else media_type
    if media_type == "image/heif" and image.mode in ("RGB", "L"):
        out_type = "image/jpeg"  # a photo; PNG would be several times larger
    # Same format first, unless the size was already fine and only the bytes were over: then
    # re-encoding losslessly gains nothing and JPEG is the only way down.
    if scale < 1.0 or out_type != media_type:
        data = _encode(image, out_type, 85)
        if len(data) <= limits.max_bytes:
            return _fitted(data, out_type, image, original_width, original_height)
    image = _flatten(image)
    for _ in range(_SHRINK_STEPS):
        for quality in _JPEG_QUALITIES:
            data = _encode(image, "image/jpeg", quality)
            if len(data) <= limits.max_bytes:
                return _fitted(data, "image/jpeg", image, original_width, original_height)
        smaller = (max(1, image.width * 3 // 4), max(1, image.height * 3 // 4))
        image = image.resize(smaller, Image.Resampling.BILINEAR)
    raise ToolError(f"Cannot fit image under {limits.max_bytes:,} bytes, even as a small JPEG")


def _target_size(width: int, height: int, scale: float, limits: ImageLimits) -> tuple[int, int]:
    # The epsilon keeps 3000 * (1568 / 3000) = 1567.9999... from losing a pixel; the loop
    # below takes it back in the rare case that overshoots.
    new_w = max(1, math.floor(width * scale + 1e-6))
    new_h = max(1, math.floor(height * scale + 1e-6))
    while new_w * new_h > limits.max_pixels or max(new_w, new_h) > limits.max_long_edge:
        # Float rounding can leave one pixel too many: trim the longer side.
        if new_w >= new_h:
            new_w -= 1
        else:
            new_h -= 1
    return new_w, new_h


def _normalise_mode(image: Image.Image) -> Image.Image:
    # Palette and 1-bit images would be resized with NEAREST by Pillow; CMYK cannot be PNG.
    if image.mode in ("RGB", "RGBA", "L", "LA"):
        return image
    has_alpha = "transparency" in image.info or image.mode in ("PA", "RGBa", "La")
    return image.convert("RGBA" if has_alpha else "RGB")


def _flatten(image: Image.Image) -> Image.Image:
    # JPEG has no alpha; put transparent pixels on white rather than whatever RGB they hide.
    if image.mode in ("RGB", "L"):
        return image
    rgba = image.convert("RGBA")
    background = Image.new("RGB", rgba.size, (255, 255, 255))
    background.paste(rgba, mask=rgba.getchannel("A"))
    return background


def _encode(image: Image.Image, media_type: str, quality: int) -> bytes:
    buffer = io.BytesIO()
    if media_type == "image/png":
        # Level 1: twice as fast as the default 6 on a resized 1920x1080 text screenshot,
        # and its file was no larger (antialiased text defeats the better levels anyway).
        image.save(buffer, "PNG", compress_level=1)
    elif media_type == "image/jpeg":
        _flatten(image).save(buffer, "JPEG", quality=quality)
    else:
        image.save(buffer, "WEBP", quality=quality)
    return buffer.getvalue()


def _fitted(data: bytes, media_type: str, image: Image.Image, ow: int, oh: int) -> FittedImage:
    return FittedImage(data, media_type, image.width, image.height, ow, oh, image.width / ow)
