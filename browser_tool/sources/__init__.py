"""Where browsers come from: the seam (`_seam`: `Browser`, `BrowserSource`, and `LaunchSource`,
one Chrome launched per conversation), the pre-warmed pool (`_pool`), and shared Chromes with a
context per conversation (`_shared`). Knows nothing of conversations; they ask it for browsers.
"""

from ._pool import PoolSource
from ._seam import Browser, BrowserSource, LaunchSource, OnClosed, SourceFactory
from ._shared import SharedSource

__all__ = [
    "Browser",
    "BrowserSource",
    "LaunchSource",
    "OnClosed",
    "PoolSource",
    "SharedSource",
    "SourceFactory",
]
