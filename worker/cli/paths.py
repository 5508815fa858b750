"""Where ``neardup scan`` reads and writes, checked before anything is opened: a path opened
for writing is emptied at once, so a wrong one destroyed the very data it named."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from worker.settings import Settings
from worker.state.layout import StoreMismatch, misfit


def check_paths(source: str, output: str | None, dead_letter: Path, state: str | None) -> None:
    """Refuse an output, dead-letter file or state that is the input or one another: ``-o`` the
    input read as 0 events, ``--dead-letter`` the input was cut short mid-run, ``-o`` and
    ``--dead-letter`` one file interleaved broken lines, ``-o X --state X`` left a traceback."""
    named = {
        "the input": None if source == "-" else source,
        "-o": None if output in (None, "", "-") else output,
        "--dead-letter": str(dead_letter),
        "--state": state,
    }
    seen: dict[object, str] = {}
    for what, path in named.items():
        if path is None:
            continue
        same = _identity(path)
        if same is None:
            continue
        if same in seen:
            raise ValueError(f"{what} {path} is also {seen[same]}: give each its own path")
        seen[same] = what


def _identity(path: str) -> object | None:
    """What two names of one file share (device and inode, or the resolved path of a file yet
    to be made); None for a device or pipe, which several may share (``-o /dev/null``)."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return os.path.realpath(path)
    if not (stat.S_ISREG(info.st_mode) or stat.S_ISDIR(info.st_mode)):
        return None
    return (info.st_dev, info.st_ino)


def check_state_dir(path: Path, settings: Settings) -> None:
    """Refuse, in one line, a ``--state`` that is a file (RocksDB says only "File exists"), a
    directory of other things (RocksDB would write its files among them), or an index of other
    settings: before the output file is opened, which would empty a previous run's."""
    if path.exists() and not path.is_dir():
        raise NotADirectoryError(f"--state {path} is a file; give it a directory: a new one, or one a scan made")
    if path.is_dir() and not (path / "CURRENT").exists() and any(path.iterdir()):
        raise FileExistsError(
            f"--state {path} holds other files and no neardup index; give it a new or empty directory"
        )
    why = misfit(path, settings.block_plan, settings.retention_ms, settings.stored_features)
    if why is not None:
        raise StoreMismatch(f"--state {why}: scan it with the settings it was built with, or give a new --state")
