"""A checkout of an earlier revision to measure beside this tree, with its own native extension.

The benches that compare against "the tree before" run it from a ``git worktree``. Its Python
calls the native engine as its revision did, and the engine's calls change (a field more in
a tuple, a method more), so the worktree gets an extension built from its own
``worker/native`` source, kept in ``~/.cache/neardup/native/`` by the source tree's git hash:
the first bench of a revision pays the build (a minute or two), the next ones a copy. A
revision whose native source is this tree's gets this tree's built extension as it is.
"""

from __future__ import annotations

import atexit
import shutil
import subprocess
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CACHE = Path.home() / ".cache" / "neardup" / "native"


def worktree(rev: str) -> Path:
    """A checkout of ``rev`` (removed at exit) with a native extension of its own source."""
    path = Path(tempfile.mkdtemp(prefix="neardup-before-"))
    subprocess.run(["git", "worktree", "add", "--detach", "-q", str(path), rev], cwd=ROOT, check=True)
    atexit.register(shutil.rmtree, path, ignore_errors=True)
    atexit.register(subprocess.run, ["git", "worktree", "remove", "--force", str(path)], cwd=ROOT, check=False)
    install_native(rev, path)
    return path


def install_native(rev: str, path: Path) -> None:
    """Put the native extension of ``rev``'s source into the checkout at ``path`` (none when
    this tree runs without one, or ``rev`` has no native source: both run the Python pipeline)."""
    built = sorted((ROOT / "worker").glob("_native*.so"))
    source = _git("rev-parse", f"{rev}:worker/native")
    if not built or source is None:
        return
    if source == _git("rev-parse", "HEAD:worker/native") and not _git("status", "--porcelain", "worker/native"):
        shutil.copy(built[0], path / "worker")
        return
    cached = CACHE / f"{source}.so"
    if not cached.exists():
        target = CACHE / "target"
        manifest = path / "worker" / "native" / "Cargo.toml"
        print(f"building the native extension of {rev} (cached for the next run)", flush=True)
        command = ["cargo", "build", "--release", "-q", "--manifest-path", str(manifest), "--target-dir", str(target)]
        subprocess.run(command, check=True)
        CACHE.mkdir(parents=True, exist_ok=True)
        shutil.copy(target / "release" / "lib_native.so", cached)
    shutil.copy(cached, path / "worker" / built[0].name)


def _git(*args: str) -> str | None:
    done = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=False)
    return done.stdout.strip() if done.returncode == 0 else None
