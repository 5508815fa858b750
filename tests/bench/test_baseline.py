"""The tree before, as the benches check it out: its native extension fits its own Python."""

from __future__ import annotations

from pathlib import Path

from bench import baseline


def test_a_revision_of_this_native_source_gets_this_trees_extension(tmp_path: Path) -> None:
    (tmp_path / "worker").mkdir()
    baseline.install_native("HEAD", tmp_path)
    built = sorted((baseline.ROOT / "worker").glob("_native*.so"))
    assert built, "the native extension is built by the project's setup"
    copied = tmp_path / "worker" / built[0].name
    assert copied.read_bytes() == built[0].read_bytes()


def test_a_revision_without_native_source_runs_the_python_pipeline(tmp_path: Path) -> None:
    (tmp_path / "worker").mkdir()
    first = baseline._git("rev-list", "--max-parents=0", "HEAD")
    assert first is not None
    baseline.install_native(first.split()[0], tmp_path)
    assert list((tmp_path / "worker").iterdir()) == []
