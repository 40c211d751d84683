"""The static pages shipped as package data under `fixtures_site/pages/`, and the files of the
small PWA under `fixtures_site/pages/pwa/`.

Cross-origin iframes need no second server: `frames.html` embeds a page of the same server
under the other loopback name (`localhost` from a page of `127.0.0.1`, and back), another origin
and another site. Headless shell keeps it in-process unless launched with `--site-per-process`.
"""

from __future__ import annotations

from importlib.resources import files

_PAGES = files(__package__) / "pages"
_PWA = _PAGES / "pwa"


def page_names() -> list[str]:
    """The file names of every fixture page (e.g. "index.html"), sorted."""
    return sorted(entry.name for entry in _PAGES.iterdir() if entry.name.endswith(".html"))


def load_pages() -> dict[str, bytes]:
    """Every fixture page's bytes by file name, read once so serving never touches the disk."""
    return {name: (_PAGES / name).read_bytes() for name in page_names()}


def load_pwa_files() -> dict[str, bytes]:
    """Every file of the fixture PWA (served under /pwa/) by file name, read once."""
    return {entry.name: entry.read_bytes() for entry in _PWA.iterdir() if entry.is_file()}
