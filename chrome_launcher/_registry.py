"""The PID registry: one JSON record per Chrome under <state_dir>/pids/.

A record is written atomically (temp file + rename) right after spawn, before anything else can
fail, and removed only once the whole process group is confirmed gone: a record that disappears
while its process lives is exactly the race that makes processes unkillable.
"""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import MISSING, asdict, dataclass, fields
from pathlib import Path
from typing import Any

from ._errors import RegistryError

RECORD_VERSION = 1


@dataclass(frozen=True)
class PidRecord:
    """What the reaper needs to prove a process group is ours and to clean up after it."""

    pid: int
    pgid: int
    start_time: int  # /proc/<pid>/stat field 22
    boot_id: str
    uid: int
    instance_id: str
    chrome_path: str
    browser_dir: str  # holds profile/; deleted with the browser
    tmp_dir: str  # Chrome's TMPDIR; deleted with the browser
    session_dir: str  # the conversation's dir; its owner deletes it
    created_at: float  # wall clock, for humans
    version: int = RECORD_VERSION
    # A persistent profile (a --user-data-dir outside browser_dir that nobody deletes), or "":
    # the profile is browser_dir/profile and goes with the browser. Optional in the JSON, so
    # records written before it existed still parse.
    user_data_dir: str = ""

    @property
    def profile_dir(self) -> str:
        return self.user_data_dir or os.path.join(self.browser_dir, "profile")

    @property
    def file_name(self) -> str:
        return f"{self.pid}-{self.start_time}.json"

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> PidRecord:
        """Parse a record. Raises ValueError for anything torn, unknown or mistyped."""
        data: Any = json.loads(text)
        if not isinstance(data, dict):
            raise ValueError("record is not a JSON object")
        names = {f.name: f.type for f in fields(cls)}
        unknown = set(data) - set(names)
        if unknown:
            raise ValueError(f"unknown fields {sorted(unknown)}")
        missing = {f.name for f in fields(cls) if f.default is MISSING} - set(data)
        if missing:
            raise ValueError(f"missing fields {sorted(missing)}")
        kinds: dict[str, type | tuple[type, ...]] = {"int": int, "str": str, "float": (int, float)}
        for name, value in data.items():
            want = kinds[str(names[name])]
            if isinstance(value, bool) or not isinstance(value, want):
                raise ValueError(f"field {name!r} has the wrong type: {value!r}")
        return cls(**data)


def write_record(pids_dir: Path, record: PidRecord) -> Path:
    """Write `record` atomically and durably; return its path. Raises RegistryError."""
    path = pids_dir / record.file_name
    tmp = pids_dir / f".{record.file_name}.tmp"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            os.write(fd, record.to_json().encode())
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except OSError as exc:
        _unlink_quietly(tmp)
        raise RegistryError(path, exc.strerror or str(exc)) from exc
    return path


def remove_record(path: Path) -> str | None:
    """Remove a record; return an error text instead of raising (cleanup never raises)."""
    try:
        path.unlink(missing_ok=True)
    except OSError as exc:
        return f"could not remove PID record {str(path)!r}: {exc.strerror or exc}"
    return None


@dataclass(frozen=True)
class RecordEntry:
    """One file of the registry: its record, or why it could not be read."""

    path: Path
    record: PidRecord | None
    error: str | None = None


def read_records(pids_dir: Path) -> list[RecordEntry]:
    """Every record file under `pids_dir`, parsed or with its error. Never raises."""
    try:
        names = sorted(os.listdir(pids_dir))
    except FileNotFoundError:
        return []
    except OSError as exc:
        return [RecordEntry(pids_dir, None, f"cannot list registry: {exc.strerror or exc}")]
    entries = []
    for name in names:
        path = pids_dir / name
        if name.startswith(".") and name.endswith(".tmp"):
            entries.append(RecordEntry(path, None, "leftover temp file of an interrupted write"))
            continue
        try:
            entries.append(RecordEntry(path, PidRecord.from_json(path.read_text())))
        except (OSError, ValueError, TypeError) as exc:
            entries.append(RecordEntry(path, None, f"unreadable record: {exc}"))
    return entries


def _unlink_quietly(path: Path) -> None:
    with contextlib.suppress(OSError):
        path.unlink(missing_ok=True)
