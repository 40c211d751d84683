"""The downloads of one page: announced by Chrome, written under the session's downloads dir."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import trio


@dataclass
class Download:
    guid: str
    url: str
    suggested_filename: str
    state: str = "inProgress"
    received_bytes: int = 0
    done: trio.Event = field(default_factory=trio.Event)


class Downloads:
    """Every download of a session by guid, and an event the next announcement sets."""

    def __init__(self) -> None:
        self.by_guid: dict[str, Download] = {}
        self.started = trio.Event()

    def new_watch(self) -> trio.Event:
        """Arm a fresh event that the next downloadWillBegin sets."""
        self.started = trio.Event()
        return self.started

    def handle(self, method: str, p: dict[str, Any]) -> None:
        if method == "Browser.downloadWillBegin":
            guid = str(p.get("guid", ""))
            self.by_guid[guid] = Download(
                guid, str(p.get("url", "")), str(p.get("suggestedFilename", "download"))
            )
            self.started.set()
        elif method == "Browser.downloadProgress":
            download = self.by_guid.get(str(p.get("guid", "")))
            if download is not None:
                download.state = str(p.get("state", download.state))
                download.received_bytes = int(p.get("receivedBytes", download.received_bytes))
                if download.state in ("completed", "canceled"):
                    download.done.set()


def download_params(downloads_dir: Path, in_context: dict[str, str]) -> dict[str, Any]:
    """Browser.setDownloadBehavior's params: downloads go to `downloads_dir` (of the browser
    context in `in_context`, when there is one)."""
    return {
        "behavior": "allowAndName",
        "downloadPath": str(downloads_dir),
        "eventsEnabled": True,
        **in_context,
    }


def place_download(downloads_dir: Path, download: Download) -> Path:
    """Give the file Chrome saved under its guid (`allowAndName`) its suggested name, made safe
    (no path, no leading dot) and unique in `downloads_dir`; return its path."""
    base = os.path.basename(download.suggested_filename)
    name = re.sub(r"[^A-Za-z0-9._-]", "_", base).lstrip(".") or "download"
    stem, dot, ext = name.partition(".")
    target, counter = downloads_dir / name, 1
    while target.exists():
        target = downloads_dir / f"{stem}-{counter}{dot}{ext}"
        counter += 1
    (downloads_dir / download.guid).rename(target)
    return target
