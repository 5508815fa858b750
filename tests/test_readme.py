"""The README tells the truth about the settings and the test command CI runs."""

from __future__ import annotations

import re
from pathlib import Path

from scripts.settings_table import table

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_settings_table_is_generated_from_settings() -> None:
    section = re.search(r"<!-- settings:begin -->\n(.*?)\n<!-- settings:end -->", README, re.S)
    assert section is not None, "README lacks the settings markers"
    assert section.group(1) == table(), "run: python scripts/settings_table.py and paste it into README.md"


def test_ci_runs_the_readme_test_command() -> None:
    command = re.search(r"^make test\b", README, re.M)
    assert command is not None
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert re.search(r"^make test$", ci, re.M)
