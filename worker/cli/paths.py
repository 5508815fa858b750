"""Where ``neardup scan`` reads and writes, checked before anything is opened: a path opened
for writing is emptied at once, so a wrong one destroyed the very data it named."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from rocksdict import Rdict

from worker.settings import Settings
from worker.state.layout import CHECKPOINT_RECORD, PLAN_KEY, RECORDS, TOPIC_RECORD, StoreMismatch, misfit_of, read_only


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
    if not (path / "CURRENT").exists():
        return
    _check_not_in_use(path)
    kept = RECORDS in Rdict.list_cf(str(path))
    with read_only(path) as db:  # opened once for both checks: a large state takes a while to open
        _check_a_scans(db, path, kept)
        why = misfit_of(db, path, settings.block_plan, settings.retention_ms, settings.stored_features)
    if why is not None:
        raise StoreMismatch(f"--state {why}: scan it with the settings it was built with, or give a new --state")


def _check_not_in_use(path: Path) -> None:
    """Refuse a state another process holds open (a scan still running, a worker's store):
    RocksDB said so in a traceback, after the output had been emptied."""
    import fcntl

    with open(path / "LOCK", "a+b") as lock:
        try:  # RocksDB's own lock is a POSIX record lock on this file: probed, then let go
            fcntl.lockf(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            raise BlockingIOError(
                f"--state {path} is in use by another process (a scan still running, or a worker): "
                "wait for it, or give this scan its own --state"
            ) from None
        fcntl.lockf(lock, fcntl.LOCK_UN)


def _check_a_scans(db: Rdict, path: Path, kept: bool) -> None:
    """Refuse a database (``db``, at ``path``, holding a records family when ``kept``) a scan did
    not make: not a neardup index at all (a worker's verdict store), or a worker's index store,
    a copy of its changelog that a scan's writes would make disagree with it."""
    index = db.get(PLAN_KEY) is not None
    records = db.get_column_family(RECORDS) if index and kept else None
    marks = [] if records is None else [records.get(key.encode()) for key in (TOPIC_RECORD, CHECKPOINT_RECORD)]
    del records  # a family object left alive keeps the database locked
    copied = marks[0] if marks else None
    worker = any(mark is not None for mark in marks)
    if not index:
        raise FileExistsError(f"--state {path} holds a database that is not a neardup index; give a new --state")
    if worker:
        whose = f" (a copy of {bytes(copied).decode()})" if copied is not None else ""
        raise FileExistsError(
            f"--state {path} is a worker's index store{whose}: a scan would write into it; copy it "
            "elsewhere first, or give a new --state"
        )
