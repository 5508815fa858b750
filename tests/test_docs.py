"""The design documents stay true to the code they name.

docs/architecture.md names each function of one event's path as ``path.py:Name``; every such
name, in any of the docs, must be defined where it says, and every file a doc names must
exist. History is git's: no commit hashes in the docs or the README.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = sorted([ROOT / "README.md", *(ROOT / "docs").glob("*.md")])
REFERENCE = re.compile(r"`((?:worker|topology|bench|scripts|tests)/[\w/]+\.py)(?::([\w.]+))?")
# A short hex word with both a digit and a letter, as `git log --oneline` prints commits.
COMMIT = re.compile(r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,12}\b")


def _defined(path: Path, qualified: str) -> bool:
    """Whether ``qualified`` (``name`` or ``Class.member``) is defined at the top of ``path``."""
    scope: list[ast.stmt] = ast.parse(path.read_text(encoding="utf-8")).body
    for part in qualified.split("."):
        found = None
        for node in scope:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == part:
                found = node
            elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                if any(isinstance(t, ast.Name) and t.id == part for t in targets):
                    found = node
        if found is None:
            return False
        scope = found.body if isinstance(found, ast.ClassDef) else []
    return True


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_every_named_file_and_function_is_where_the_doc_says(doc: Path) -> None:
    missing = []
    for path, name in REFERENCE.findall(doc.read_text(encoding="utf-8")):
        target = ROOT / path
        if not target.is_file():
            missing.append(path)
        elif name and not _defined(target, name):
            missing.append(f"{path}:{name}")
    assert missing == []


def test_the_architecture_names_the_path_of_one_event() -> None:
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 400
    path = text.split("## One event's path", 1)[1].split("\n## ", 1)[0]
    named = [f"{p}:{n}" for p, n in REFERENCE.findall(path) if n]
    for stage in (
        "FingerprintStage.parse",
        "FingerprintStage.fan_out_all",
        "fingerprint.py:fingerprint_each",
        "IndexStage.process",
        "VerdictStage.process",
        "match.py:earliest",
    ):
        assert any(ref.endswith(stage) for ref in named), stage


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_no_commit_hashes_in_the_docs(doc: Path) -> None:
    assert COMMIT.findall(doc.read_text(encoding="utf-8")) == []
