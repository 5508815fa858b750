"""``make setup`` prints nothing of ours but its commands: the build reads pyproject.toml cleanly."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_build_backend_has_no_warning_about_our_configuration() -> None:
    """pip prepares the editable metadata as ``make setup`` does (build isolation, the Makefile's
    warning filter); a deprecated or inconsistent pyproject.toml shows up here as a warning."""
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    install = re.search(r"^\t(.*)\$\(BIN\)/pip install -q -e '\.\[dev\]'$", makefile, re.M)
    assert install is not None, "the Makefile's install line changed; update this test"
    env = dict(os.environ)
    for assignment in install.group(1).split():
        name, _, value = assignment.partition("=")
        env[name] = value.strip("'")
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--dry-run", "--no-deps", "-q", "-e", str(ROOT)],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr
    assert "Warning" not in proc.stdout + proc.stderr, proc.stdout + proc.stderr
