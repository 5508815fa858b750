"""bench/stages.py: several partition counts in one run, each on its own row."""

from __future__ import annotations

import re

import pytest

from bench import stages


def test_partition_counts_run_side_by_side(capsys: pytest.CaptureFixture[str]) -> None:
    stages.main(["--rounds", "1", "--events", "300", "--partitions", "1,2"])
    out = capsys.readouterr().out
    assert "1,2 partitions" in out
    rows = {line.split()[0] for line in out.splitlines() if line.startswith("this/")}
    assert {"this/p1", "this/p2", "this/p1:", "this/p2:"} <= rows
    logged = {
        m[0]: int(m[1].replace(",", "")) for m in re.findall(r"^(this/p\d): index changelog ([\d,]+) bytes", out, re.M)
    }
    # An event's entry travels once for each partition its shares reach.
    assert logged["this/p1"] < logged["this/p2"]


def test_several_sizes_and_several_counts_are_refused() -> None:
    with pytest.raises(SystemExit) as refused:
        stages.main(["--batch", "4,500", "--partitions", "1,4"])
    assert refused.value.code == 2
