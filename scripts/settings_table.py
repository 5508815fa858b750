"""Print the README's settings table from worker.settings (the single source of truth).

Usage: python scripts/settings_table.py   (paste the output between the README markers;
tests/test_readme.py fails when the two drift apart)
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


if __name__ == "__main__":
    print(table())
