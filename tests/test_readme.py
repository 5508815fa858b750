"""The README tells the truth: its settings table, the test command CI runs, its examples."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from scripts.settings_table import SCRIPTS, script_variables, scripts_table, table
from worker.settings import ENV_PREFIX, Settings

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_settings_table_is_generated_from_settings() -> None:
    section = re.search(r"<!-- settings:begin -->\n(.*?)\n<!-- settings:end -->", README, re.S)
    assert section is not None, "README lacks the settings markers"
    assert section.group(1) == table(), "run: python scripts/settings_table.py and paste it into README.md"


def test_every_variable_the_scripts_read_is_in_a_generated_table() -> None:
    section = re.search(r"<!-- scripts:begin -->\n(.*?)\n<!-- scripts:end -->", README, re.S)
    assert section is not None, "README lacks the scripts markers"
    assert section.group(1) == scripts_table(), "run: python scripts/settings_table.py scripts"
    settings = {ENV_PREFIX + field.upper() for field in Settings.__dataclass_fields__}
    for script in SCRIPTS:
        read = set(re.findall(r"\$\{([A-Z_][A-Z0-9_]*):-", (ROOT / "scripts" / script).read_text(encoding="utf-8")))
        listed = {name for name, _ in script_variables(script)}
        # A script may read a setting (documented above) or a variable another script lists.
        others = {name for other in SCRIPTS for name, _ in script_variables(other)}
        unlisted = sorted(read - listed - settings - others - {"JAVA_HOME"})
        assert unlisted == [], f"scripts/{script} reads {unlisted} without listing them in its header"
    assert "JAVA_HOME" in scripts_table()


def test_ci_runs_the_readme_test_command() -> None:
    command = re.search(r"^make test\b", README, re.M)
    assert command is not None
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert re.search(r"^make test$", ci, re.M)


def _transcript(heading: str) -> list[tuple[str, list[str]]]:
    """The ``$ command`` lines of the first sh block under ``heading``, each with the lines it prints."""
    section = README.split(heading, 1)[1]
    block = section.split("```sh\n", 1)[1].split("\n```", 1)[0]
    steps: list[tuple[str, list[str]]] = []
    for line in block.splitlines():
        if line.startswith("$ "):
            steps.append((line[2:], []))
        else:
            steps[-1][1].append(line)
    return steps


def test_the_scan_example_prints_what_the_readme_shows(tmp_path: Path) -> None:
    """Run as written: the feed the README cats, the scan, the verdicts it cats. Only what varies
    by run is masked: the timing, and the ``ts`` scan gives an event without one (its clock)."""
    steps = _transcript("## `neardup scan`")
    assert [command.split()[0] for command, _ in steps] == ["cat", "neardup", "cat"]
    feed = steps[0][0].split()[1]
    (tmp_path / feed).write_text("\n".join(steps[0][1]) + "\n", encoding="utf-8")
    args = steps[1][0].split()[1:]
    proc = subprocess.run(
        [sys.executable, "-m", "worker.cli", *args], cwd=tmp_path, capture_output=True, text=True, timeout=300
    )

    def timing(line: str) -> str:
        return re.sub(r" in [\d.]+ s \(\d+ events/s\)$", " in _ s (_ events/s)", line)

    assert [timing(line) for line in proc.stderr.splitlines()] == [timing(line) for line in steps[1][1]]
    has_ts = {json.loads(line).get("id"): "ts" in json.loads(line) for line in steps[0][1]}
    got = [json.loads(line) for line in (tmp_path / steps[2][0].split()[1]).read_text(encoding="utf-8").splitlines()]
    shown = [json.loads(line) for line in steps[2][1]]
    for verdicts in (got, shown):
        for verdict in verdicts:
            if not has_ts[verdict["id"]]:
                verdict["ts"] = "scan time"
    assert got == shown
