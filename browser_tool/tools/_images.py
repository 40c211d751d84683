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
import struct
from dataclasses import dataclass
from pathlib import Path

from PIL import Image

from .._errors import ToolError

__all__ = [
    "FittedImage",
    "ImageLimits",
    "extension_for",
    "fit_image",
    "image_size",
    "media_type_for",
    "read_image_file",
]

_SUPPORTED = "supported formats are PNG, JPEG, GIF and WebP (HEIC with pillow-heif installed)"
_MEDIA_TYPES = {"PNG": "image/png", "JPEG": "image/jpeg", "GIF": "image/gif", "WEBP": "image/webp"}
_PIL_FORMATS = {media_type: fmt for fmt, media_type in _MEDIA_TYPES.items()}
_HEIF_BRANDS = {b"heic", b"heix", b"hevc", b"hevx", b"heim", b"heis", b"mif1", b"msf1"}
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


def media_type_for(fmt: str) -> str:
    """Media type of a Pillow format name ("PNG" -> "image/png"). Raises `ToolError` if unknown."""
    try:
        return _MEDIA_TYPES[fmt.upper()]
    except KeyError:
        raise ToolError(f"Unsupported image format {fmt!r}: {_SUPPORTED}") from None


def extension_for(media_type: str) -> str:
    """File extension, with its dot, of a media type `fit_image` returns ("image/png" -> ".png")."""
    fmt = _PIL_FORMATS.get(media_type)
    if fmt is None:
        raise ToolError(f"Unsupported image media type {media_type!r}: {_SUPPORTED}")
    return ".jpg" if fmt == "JPEG" else f".{fmt.lower()}"


def image_size(data: bytes) -> tuple[str, int, int]:
    """Return (media type, width, height) read from the header alone, without decoding pixels.

    Raises `ToolError` for a format other than PNG, GIF, JPEG or WebP, or a truncated header.
    """
    try:
        media_type, width, height = _parse_header(data)
    except (struct.error, IndexError):
        raise ToolError("Image data is truncated: its header is incomplete") from None
    if width <= 0 or height <= 0:
        raise ToolError(f"Image header declares an empty {width}x{height} image")
    return media_type, width, height


def _parse_header(data: bytes) -> tuple[str, int, int]:
    if data.startswith(b"\x89PNG\r\n\x1a\n") and data[12:16] == b"IHDR":
        width, height = struct.unpack(">II", data[16:24])
        return "image/png", width, height
    if data[:6] in (b"GIF87a", b"GIF89a"):
        width, height = struct.unpack("<HH", data[6:10])
        return "image/gif", width, height
    if data.startswith(b"\xff\xd8"):
        return _parse_jpeg(data)
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return _parse_webp(data)
    if _is_heif(data):
        raise ToolError(f"Unsupported image format HEIC/HEIF here: {_SUPPORTED}")
    raise ToolError(f"Unsupported image format (starts with {data[:8].hex()!r}): {_SUPPORTED}")


def _parse_jpeg(data: bytes) -> tuple[str, int, int]:
    pos = 2
    while True:
        if data[pos] != 0xFF:
            raise ToolError("JPEG data is corrupt: expected a marker")
        marker = data[pos + 1]
        if marker == 0xFF:  # fill byte before a marker
            pos += 1
            continue
        if marker == 0x01 or 0xD0 <= marker <= 0xD7:  # markers without a length
            pos += 2
            continue
        if marker in (0xD9, 0xDA):  # end of image or start of scan, and still no frame header
            raise ToolError("JPEG data is corrupt: no frame header (SOF) before the image data")
        (length,) = struct.unpack(">H", data[pos + 2 : pos + 4])
        # SOF0..SOF15 except DHT (C4), JPG (C8) and DAC (CC), which share the range.
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            height, width = struct.unpack(">HH", data[pos + 5 : pos + 9])
            return "image/jpeg", width, height
        pos += 2 + length


def _parse_webp(data: bytes) -> tuple[str, int, int]:
    chunk = data[12:16]
    if chunk == b"VP8 ":  # lossy: 3-byte frame tag, start code, then 14-bit sizes
        if data[23:26] != b"\x9d\x01\x2a":
            raise ToolError("WebP data is corrupt: bad VP8 start code")
        width, height = struct.unpack("<HH", data[26:30])
        return "image/webp", width & 0x3FFF, height & 0x3FFF
    if chunk == b"VP8L":  # lossless: signature byte, then 14-bit (size - 1) fields
        if data[20] != 0x2F:
            raise ToolError("WebP data is corrupt: bad VP8L signature")
        (bits,) = struct.unpack("<I", data[21:25])
        return "image/webp", (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8X":  # extended: flags, reserved, then 24-bit (canvas size - 1) fields
        if len(data) < 30:
            raise IndexError
        width = int.from_bytes(data[24:27], "little") + 1
        height = int.from_bytes(data[27:30], "little") + 1
        return "image/webp", width, height
    raise ToolError(f"Unsupported WebP chunk {chunk!r}: {_SUPPORTED}")


def _is_heif(data: bytes) -> bool:
    return data[4:8] == b"ftyp" and data[8:12] in _HEIF_BRANDS


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
        if _is_heif(data):
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
        image = Image.open(io.BytesIO(data), formats=[_PIL_FORMATS[media_type]])
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
            f"HEIC/HEIF images need the `pillow-heif` package installed; {_SUPPORTED}"
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
