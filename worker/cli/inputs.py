"""What the commands that read JSON lines share: opening an input, its first line's BOM, and
the counts of a summary line. Loads nothing of Kafka's."""

from __future__ import annotations

import codecs
import os
import sys
from collections.abc import Iterable, Iterator
from typing import BinaryIO


def default_sample() -> str:
    """The small real sample corpus shipped with the package."""
    return os.path.join(os.path.dirname(os.path.dirname(__file__)), "data", "sample_feed.jsonl")


def named_input(name: str) -> str:
    """The path an input argument names: 'sample' is the shipped sample, for every command."""
    return default_sample() if name == "sample" else name


def open_input(path: str) -> BinaryIO:
    """An input file of JSON lines, read as bytes ('-': stdin); a missing one is one line
    naming it, not ``[Errno 2] No such file or directory: 'x'``."""
    if path == "-":
        return open(sys.stdin.fileno(), "rb", closefd=False)
    try:
        return open(path, "rb")
    except FileNotFoundError:
        raise FileNotFoundError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise IsADirectoryError(f"{path}: is a directory, not a file of JSON lines") from None


def count(n: int, noun: str) -> str:
    """``1 event``, ``2 events``: a summary line's numbers with their nouns."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def without_bom(lines: Iterable[bytes]) -> Iterator[bytes]:
    """The lines with a leading UTF-8 byte-order mark dropped, as ``utf-8-sig`` reads them:
    editors on Windows write one, and JSON may not start with it (line 1 was refused)."""
    rest = iter(lines)
    first = next(rest, None)
    if first is None:
        return
    yield first.removeprefix(codecs.BOM_UTF8)
    yield from rest
