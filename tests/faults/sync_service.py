"""A `browser-tool serve` subprocess for synchronous tests (Hypothesis runs its examples
synchronously): started once per module on its own state root, on 127.0.0.1 port 0, ready when
it prints its `listening on` line; stopped with SIGTERM by its pid, and then nothing of it may
be left: no process mentioning its root, no file under its state dir."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from tests.support.checks import leftover_files, live_processes_mentioning
from tests.support.service import cli_argv, service_env


@dataclass(frozen=True)
class SyncService:
    url: str
    state_dir: Path
    process: subprocess.Popen[bytes]


@contextlib.contextmanager
def sync_service(env: Mapping[str, str] | None = None) -> Iterator[SyncService]:
    root = Path(tempfile.mkdtemp(prefix="bt-", dir="/tmp"))
    state = root / "state"
    argv = cli_argv("serve", "--port", "0", "--state-dir", str(state))
    process = subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=service_env(env)
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline().decode().strip()
        assert line.startswith("listening on http://127.0.0.1:"), line
        yield SyncService(line.removeprefix("listening on "), state, process)
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=60) == 0
        assert live_processes_mentioning(str(root)) == []
        assert leftover_files(state) == []
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        if process.stdout is not None:
            process.stdout.close()
        for pid in live_processes_mentioning(str(root)):  # a leak fails above; not here
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        shutil.rmtree(root, ignore_errors=True)
