"""A PNG line chart with Pillow (already a dependency; matplotlib would be one more, and a big
one, for one chart): p50 latency of a call against the number of concurrent conversations."""

from __future__ import annotations

import math
from pathlib import Path

from PIL import Image, ImageDraw

COLORS = [(31, 119, 180), (214, 39, 40), (44, 160, 44), (255, 127, 14), (148, 103, 189)]
W, H = 900, 560
LEFT, RIGHT, TOP, BOTTOM = 80, 220, 50, 70


def plot_latency(series: dict[str, dict[int, float]], path: Path, title: str, y_label: str) -> None:
    """`series`: name -> {concurrency: p50 ms}. Writes a PNG to `path`."""
    image = Image.new("RGB", (W, H), "white")
    draw = ImageDraw.Draw(image)
    xs = sorted({x for points in series.values() for x in points})
    ys = [y for points in series.values() for y in points.values()]
    if not xs or not ys:
        image.save(path)
        return
    top = _nice_ceiling(max(ys))
    plot_w, plot_h = W - LEFT - RIGHT, H - TOP - BOTTOM

    def px(x: int) -> float:
        return LEFT + (xs.index(x) / max(1, len(xs) - 1)) * plot_w

    def py(y: float) -> float:
        return TOP + plot_h - (y / top) * plot_h

    draw.text((LEFT, 15), title, fill="black")
    draw.line([(LEFT, TOP), (LEFT, TOP + plot_h), (LEFT + plot_w, TOP + plot_h)], fill="black")
    for i in range(6):
        value = top * i / 5
        y = py(value)
        draw.line([(LEFT - 5, y), (LEFT + plot_w, y)], fill=(225, 225, 225))
        draw.text((10, y - 6), f"{value:.0f}", fill="black")
    for x in xs:
        draw.line([(px(x), TOP + plot_h), (px(x), TOP + plot_h + 5)], fill="black")
        draw.text((px(x) - 6, TOP + plot_h + 10), str(x), fill="black")
    draw.text((LEFT + plot_w / 2 - 80, H - 30), "concurrent conversations", fill="black")
    draw.text((10, TOP - 25), y_label, fill="black")
    for index, (name, points) in enumerate(series.items()):
        color = COLORS[index % len(COLORS)]
        coords = [(px(x), py(points[x])) for x in xs if x in points]
        if len(coords) > 1:
            draw.line(coords, fill=color, width=3)
        for cx, cy in coords:
            draw.ellipse([(cx - 4, cy - 4), (cx + 4, cy + 4)], fill=color)
        ly = TOP + 20 + index * 22
        draw.line([(W - RIGHT + 20, ly + 6), (W - RIGHT + 45, ly + 6)], fill=color, width=3)
        draw.text((W - RIGHT + 52, ly), name, fill="black")
    image.save(path)


def _nice_ceiling(value: float) -> float:
    if value <= 0:
        return 1.0
    magnitude = 10 ** math.floor(math.log10(value))
    for step in (1, 2, 2.5, 5, 10):
        if value <= step * magnitude:
            return float(step * magnitude)
    return float(10 * magnitude)


def plot_bars(values: dict[str, float], path: Path, title: str, unit: str) -> None:
    """`values`: label -> value, drawn as horizontal bars in order. Writes a PNG to `path`."""
    row, left, right = 34, 420, 90
    height = TOP + row * max(1, len(values)) + 30
    image = Image.new("RGB", (W, height), "white")
    draw = ImageDraw.Draw(image)
    draw.text((10, 15), title, fill="black")
    top = _nice_ceiling(max(values.values(), default=1.0))
    span = W - left - right
    for index, (label, value) in enumerate(values.items()):
        y = TOP + index * row
        draw.text((10, y + 8), label, fill="black")
        width = span * value / top
        draw.rectangle([(left, y + 4), (left + width, y + row - 8)], fill=COLORS[index % 5])
        draw.text((left + width + 6, y + 8), f"{value:.2f} {unit}", fill="black")
    image.save(path)
