"""Print the README's tables of environment variables from their single sources of truth.

``NEARDUP_*`` settings come from worker.settings; the variables of the local broker and the
demo from the "Environment" list at the top of scripts/kafka-local and scripts/demo.

Usage: python scripts/settings_table.py [scripts]   (paste the output between the README's
markers; tests/test_readme.py fails when they drift apart)
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from worker.settings import Settings  # noqa: E402


def table() -> str:
    rows = ["| variable | default | meaning |", "| --- | --- | --- |"]
    for name, default, doc in Settings.documented():
        rows.append(f"| `{name}` | `{default}` | {doc} |")
    return "\n".join(rows)


SCRIPTS = ("kafka-local", "demo")


def script_variables(name: str) -> list[tuple[str, str]]:
    """(variable, meaning) from the "Environment" list in the header of ``scripts/<name>``."""
    header = (Path(__file__).resolve().parent / name).read_text(encoding="utf-8").split("set -euo", 1)[0]
    listed = header.split("# Environment", 1)[1].split("\n", 1)[1]
    rows = []
    for line in listed.splitlines():
        name_, _, doc = line.removeprefix("#").strip().partition(" ")
        if name_:
            rows.append((name_, doc.strip()))
    return rows


def scripts_table() -> str:
    """The variables the local broker and the demo read, from their headers."""
    rows = ["| variable | read by | meaning |", "| --- | --- | --- |"]
    for script in SCRIPTS:
        for name, doc in script_variables(script):
            rows.append(f"| `{name}` | `scripts/{script}` | {doc} |")
    return "\n".join(rows)


if __name__ == "__main__":
    print(scripts_table() if sys.argv[1:] == ["scripts"] else table())
