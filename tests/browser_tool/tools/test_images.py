"""Image sizing for models.

Charter: pure and synchronous; every image is generated in the test with Pillow (noise from a
seeded generator), files live under tmp_path. We check that header parsing agrees with Pillow,
that an image within limits comes back as the very same bytes, that anything larger comes back
within every limit with the right scale and format, and that bad input is a ToolError, never a
crash or a warning (pytest turns warnings into errors).
"""

from __future__ import annotations

import io
import os
import random
import struct
import sys
import zlib
from pathlib import Path

import pytest
from PIL import Image

from browser_tool._errors import ToolError
from browser_tool.tools._image_fit import FittedImage, ImageLimits, fit_image, read_image_file
from browser_tool.tools._image_header import extension_for, image_size, media_type_for

LIMITS = ImageLimits()


def encode(image: Image.Image, fmt: str, **params: object) -> bytes:
    buffer = io.BytesIO()
    if fmt == "PNG":
        params.setdefault("compress_level", 1)  # noise at the default level is slow to write
    image.save(buffer, fmt, **params)
    return buffer.getvalue()


def solid(size: tuple[int, int], mode: str = "RGB") -> Image.Image:
    colour = (200, 30, 60, 255) if mode == "RGBA" else (200, 30, 60)
    return Image.new(mode, size, colour[: len(mode)])


def noise(size: tuple[int, int], seed: int = 1) -> Image.Image:
    data = random.Random(seed).randbytes(size[0] * size[1] * 3)
    return Image.frombytes("RGB", size, data)


def decoded(fitted: FittedImage) -> Image.Image:
    image = Image.open(io.BytesIO(fitted.data))
    image.load()
    return image


def assert_within(fitted: FittedImage, limits: ImageLimits) -> None:
    assert max(fitted.width, fitted.height) <= limits.max_long_edge
    assert fitted.width * fitted.height <= limits.max_pixels
    assert len(fitted.data) <= limits.max_bytes
    assert decoded(fitted).size == (fitted.width, fitted.height)
    assert fitted.scale == fitted.width / fitted.original_width


def png_header(width: int, height: int) -> bytes:
    body = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    crc = struct.pack(">I", zlib.crc32(b"IHDR" + body))
    return b"\x89PNG\r\n\x1a\n" + struct.pack(">I", len(body)) + b"IHDR" + body + crc


SAMPLES = [
    ("PNG", {}, (100, 100), "image/png"),
    ("PNG", {}, (10, 20000), "image/png"),
    ("JPEG", {}, (4000, 3000), "image/jpeg"),
    ("JPEG", {"progressive": True}, (321, 123), "image/jpeg"),
    ("GIF", {}, (640, 480), "image/gif"),
    ("WEBP", {"quality": 80}, (999, 333), "image/webp"),  # VP8 (lossy)
    ("WEBP", {"lossless": True}, (16383, 7), "image/webp"),  # VP8L
]


@pytest.mark.parametrize(("fmt", "params", "size", "media_type"), SAMPLES)
def test_header_size_matches_pillow(
    fmt: str, params: dict[str, object], size: tuple[int, int], media_type: str
) -> None:
    data = encode(solid(size), fmt, **params)
    assert image_size(data) == (media_type, *Image.open(io.BytesIO(data)).size)
    assert Image.open(io.BytesIO(data)).size == size


def test_header_size_of_extended_webp() -> None:
    translucent = Image.new("RGBA", (300, 17), (200, 30, 60, 128))
    data = encode(translucent, "WEBP", quality=80, exif=b"Exif\x00\x00")
    assert data[12:16] == b"VP8X"
    assert image_size(data) == ("image/webp", 300, 17)


def test_header_size_of_jpeg_with_metadata_before_the_frame() -> None:
    data = encode(solid((77, 55)), "JPEG", exif=b"Exif\x00\x00" + b"\x00" * 500, dpi=(72, 72))
    assert image_size(data) == ("image/jpeg", 77, 55)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "Unsupported image format"),
        (b"hello, world", "Unsupported image format"),
        (b"%PDF-1.7\n", "supported formats are PNG, JPEG, GIF and WebP"),
        (b"\x00\x00\x00\x18ftypheic\x00\x00\x00\x00", "HEIC"),
        (png_header(10, 10)[:20], "truncated"),
        (b"GIF89a\x01", "truncated"),
        (b"\xff\xd8\xff\xe0\x00\x10JFIF", "truncated"),
        (b"\xff\xd8\xff\xda\x00\x08", "no frame header"),
        (b"\xff\xd8\x00\x00", "corrupt"),
        (b"RIFF\x00\x00\x00\x00WEBPVP8X\x0a\x00", "truncated"),
        (b"RIFF\x00\x00\x00\x00WEBPXXXX", "Unsupported WebP chunk"),
        (png_header(0, 10), "empty 0x10 image"),
    ],
)
def test_bad_data_is_a_tool_error(data: bytes, message: str) -> None:
    with pytest.raises(ToolError, match=message):
        image_size(data)
    with pytest.raises(ToolError):
        fit_image(data, LIMITS)


@pytest.mark.parametrize("fmt", ["PNG", "JPEG", "GIF", "WEBP"])
def test_image_within_limits_is_returned_untouched(fmt: str) -> None:
    data = encode(solid((100, 100)), fmt)
    fitted = fit_image(data, LIMITS)
    assert fitted.data is data
    assert fitted.media_type == media_type_for(fmt)
    assert (fitted.width, fitted.height, fitted.scale) == (100, 100, 1.0)
    assert (fitted.original_width, fitted.original_height) == (100, 100)


def test_image_exactly_at_the_limits_is_untouched() -> None:
    limits = ImageLimits(max_long_edge=200, max_pixels=200 * 100, max_bytes=10**6)
    data = encode(solid((200, 100)), "PNG")
    assert fit_image(data, limits).data is data


@pytest.mark.parametrize(
    ("fmt", "size", "expected"),
    [
        ("PNG", (4000, 3000), (1238, 928)),  # total pixels bind: sqrt(1.15M / 12M)
        ("JPEG", (4000, 3000), (1238, 928)),
        ("WEBP", (4000, 3000), (1238, 928)),
        ("PNG", (10, 20000), (1, 1568)),  # long edge binds; width cannot go below 1
        ("JPEG", (3000, 200), (1568, 104)),
    ],
)
def test_large_image_is_scaled_in_its_own_format(
    fmt: str, size: tuple[int, int], expected: tuple[int, int]
) -> None:
    fitted = fit_image(encode(solid(size), fmt), LIMITS)
    assert (fitted.width, fitted.height) == expected
    assert (fitted.original_width, fitted.original_height) == size
    assert fitted.media_type == media_type_for(fmt)
    assert decoded(fitted).format == fmt
    assert_within(fitted, LIMITS)


def test_scaling_keeps_the_picture() -> None:
    image = Image.new("RGB", (4000, 3000), (255, 255, 255))
    image.paste((0, 0, 255), (0, 0, 2000, 3000))  # left half blue
    fitted = fit_image(encode(image, "PNG"), LIMITS)
    result = decoded(fitted).convert("RGB")
    assert result.getpixel((10, 10)) == (0, 0, 255)
    assert result.getpixel((fitted.width - 10, 10)) == (255, 255, 255)


def test_animated_gif_becomes_a_png_of_its_first_frame() -> None:
    frames = [Image.new("RGB", (2000, 1000), colour) for colour in ((255, 0, 0), (0, 255, 0))]
    buffer = io.BytesIO()
    frames[0].save(buffer, "GIF", save_all=True, append_images=frames[1:], duration=100)
    data = buffer.getvalue()
    assert getattr(Image.open(io.BytesIO(data)), "n_frames", 1) == 2
    fitted = fit_image(data, LIMITS)
    assert fitted.media_type == "image/png"
    assert (fitted.width, fitted.height) == (1516, 758)
    assert decoded(fitted).convert("RGB").getpixel((5, 5)) == (255, 0, 0)
    assert_within(fitted, LIMITS)


def test_small_animated_gif_is_untouched() -> None:
    frames = [Image.new("RGB", (50, 50), colour) for colour in ((255, 0, 0), (0, 255, 0))]
    buffer = io.BytesIO()
    frames[0].save(buffer, "GIF", save_all=True, append_images=frames[1:])
    data = buffer.getvalue()
    assert fit_image(data, LIMITS).data is data


@pytest.mark.parametrize("fmt", ["PNG", "WEBP", "GIF"])
def test_too_many_bytes_forces_jpeg_under_the_byte_limit(fmt: str) -> None:
    limits = ImageLimits(max_bytes=40_000)
    data = encode(noise((600, 400)), fmt, **({"lossless": True} if fmt == "WEBP" else {}))
    assert len(data) > limits.max_bytes
    fitted = fit_image(data, limits)
    assert fitted.media_type == "image/jpeg"
    assert decoded(fitted).format == "JPEG"
    assert fitted.width / fitted.height == pytest.approx(600 / 400, rel=0.02)
    assert_within(fitted, limits)


def test_scaled_image_still_too_big_falls_back_to_jpeg() -> None:
    limits = ImageLimits(max_long_edge=500, max_pixels=250_000, max_bytes=60_000)
    fitted = fit_image(encode(noise((1000, 750)), "PNG"), limits)
    assert fitted.media_type == "image/jpeg"
    assert fitted.original_width == 1000
    assert_within(fitted, limits)


def test_transparent_png_flattened_on_white_for_jpeg() -> None:
    image = noise((400, 400)).convert("RGBA")
    image.paste((0, 0, 0, 0), (0, 0, 100, 100))  # transparent black corner
    fitted = fit_image(encode(image, "PNG"), ImageLimits(max_bytes=60_000))
    assert fitted.media_type == "image/jpeg"
    corner = decoded(fitted).convert("RGB").getpixel((5, 5))
    assert isinstance(corner, tuple)
    assert min(corner) > 240


def test_palette_png_is_resized_smoothly() -> None:
    image = Image.new("RGB", (3200, 100), (0, 0, 0))
    for x in range(0, 3200, 2):  # 1-pixel stripes average to grey, never pure black or white
        image.paste((255, 255, 255), (x, 0, x + 1, 100))
    fitted = fit_image(encode(image.convert("P"), "PNG"), LIMITS)
    grey = decoded(fitted).convert("L").getpixel((fitted.width // 2, fitted.height // 2))
    assert isinstance(grey, int)
    assert 60 < grey < 195


def test_byte_limit_that_cannot_be_met_is_a_tool_error() -> None:
    with pytest.raises(ToolError, match="Cannot fit image under 10 bytes"):
        fit_image(encode(noise((300, 300)), "PNG"), ImageLimits(max_bytes=10))


def test_decompression_bomb_is_refused_from_the_header() -> None:
    # 100k x 100k declared in a few bytes: refused before Pillow reads a pixel or warns.
    with pytest.raises(ToolError, match="too large to decode: 100000x100000"):
        fit_image(png_header(100_000, 100_000), LIMITS)


def test_pillow_bomb_limit_is_honoured_when_lower(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 1_000_000)
    with pytest.raises(ToolError, match="over 1,000,000 pixels"):
        fit_image(encode(solid((2000, 1000)), "PNG"), LIMITS)


def test_corrupt_pixels_after_a_good_header_is_a_tool_error() -> None:
    data = encode(noise((1700, 300)), "PNG")
    with pytest.raises(ToolError, match="Cannot decode image/png image"):
        fit_image(data[: len(data) // 2], LIMITS)


def test_read_image_file(tmp_path: Path) -> None:
    path = tmp_path / "shot.png"
    path.write_bytes(encode(solid((2000, 1500)), "PNG"))
    fitted = read_image_file(path, LIMITS)
    assert (fitted.width, fitted.height, fitted.media_type) == (1238, 928, "image/png")


def test_read_image_file_missing(tmp_path: Path) -> None:
    path = tmp_path / "nope.png"
    with pytest.raises(ToolError) as info:
        read_image_file(path, LIMITS)
    assert str(info.value) == f"Image file not found: {path}"


def test_read_image_file_directory(tmp_path: Path) -> None:
    with pytest.raises(ToolError, match="is a directory"):
        read_image_file(tmp_path, LIMITS)


def test_read_image_file_not_an_image(tmp_path: Path) -> None:
    path = tmp_path / "notes.png"
    path.write_text("not an image")
    with pytest.raises(ToolError, match=r"Unsupported image format .*\(file: .*notes.png\)"):
        read_image_file(path, LIMITS)


def test_read_heic_without_pillow_heif(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pillow_heif", None)  # import now raises ImportError
    path = tmp_path / "photo.heic"
    path.write_bytes(b"\x00\x00\x00\x18ftypheic\x00\x00\x00\x00mif1heic")
    with pytest.raises(ToolError, match="HEIC/HEIF images need the `pillow-heif` package"):
        read_image_file(path, LIMITS)


def test_format_names() -> None:
    assert media_type_for("png") == "image/png"
    assert media_type_for("WEBP") == "image/webp"
    assert extension_for("image/jpeg") == ".jpg"
    assert extension_for("image/webp") == ".webp"
    with pytest.raises(ToolError, match="Unsupported image format 'TIFF'"):
        media_type_for("TIFF")
    with pytest.raises(ToolError):
        extension_for("image/tiff")


def test_read_image_file_refuses_a_fifo_without_hanging(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.png"
    os.mkfifo(fifo)
    with pytest.raises(ToolError, match="is not a regular file"):
        read_image_file(fifo, LIMITS)


def test_read_image_file_refuses_a_device() -> None:
    with pytest.raises(ToolError, match="/dev/zero is not a regular file"):
        read_image_file(Path("/dev/zero"), LIMITS)
