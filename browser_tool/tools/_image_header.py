"""Image headers: the format, width and height of an image read from its first bytes, with no
decode, and the media types, Pillow formats and file extensions of the formats we support."""

from __future__ import annotations

import struct

from .._errors import ToolError

__all__ = [
    "SUPPORTED_FORMATS",
    "extension_for",
    "image_size",
    "is_heif",
    "media_type_for",
    "pil_format_for",
]

SUPPORTED_FORMATS = (
    "supported formats are PNG, JPEG, GIF and WebP (HEIC with pillow-heif installed)"
)
_MEDIA_TYPES = {"PNG": "image/png", "JPEG": "image/jpeg", "GIF": "image/gif", "WEBP": "image/webp"}
_PIL_FORMATS = {media_type: fmt for fmt, media_type in _MEDIA_TYPES.items()}
_HEIF_BRANDS = {b"heic", b"heix", b"hevc", b"hevx", b"heim", b"heis", b"mif1", b"msf1"}


def media_type_for(fmt: str) -> str:
    """Media type of a Pillow format name ("PNG" -> "image/png"). Raises `ToolError` if unknown."""
    try:
        return _MEDIA_TYPES[fmt.upper()]
    except KeyError:
        raise ToolError(f"Unsupported image format {fmt!r}: {SUPPORTED_FORMATS}") from None


def pil_format_for(media_type: str) -> str:
    """Pillow's name for a media type ("image/png" -> "PNG"). Raises `ToolError` if unknown."""
    fmt = _PIL_FORMATS.get(media_type)
    if fmt is None:
        raise ToolError(f"Unsupported image media type {media_type!r}: {SUPPORTED_FORMATS}")
    return fmt


def extension_for(media_type: str) -> str:
    """File extension, with its dot, of a media type `fit_image` returns ("image/png" -> ".png")."""
    fmt = pil_format_for(media_type)
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
    if is_heif(data):
        raise ToolError(f"Unsupported image format HEIC/HEIF here: {SUPPORTED_FORMATS}")
    raise ToolError(
        f"Unsupported image format (starts with {data[:8].hex()!r}): {SUPPORTED_FORMATS}"
    )


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
    raise ToolError(f"Unsupported WebP chunk {chunk!r}: {SUPPORTED_FORMATS}")


def is_heif(data: bytes) -> bool:
    """Whether `data` starts like a HEIC/HEIF file (an ISO-BMFF `ftyp` box of a HEIF brand)."""
    return data[4:8] == b"ftyp" and data[8:12] in _HEIF_BRANDS
