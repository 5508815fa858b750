"""Peak memory of ``neardup scan`` at growing input sizes: the state is on disk, so it stays flat.

Builds a stream of N events by replaying the development set (real text) with fresh ids —
every event is indexed whether or not it is a duplicate, so the index grows with N — then runs
``neardup scan`` on the first 10 000, 30 000 and 100 000 events as separate processes and reports
each one's peak RSS (``wait4`` rusage), wall time and docs/s. A bounded-memory scan shows the
same peak at 10x the input; the 10 000-event run is the baseline measured in the same run.

    python bench/scan_memory.py [--sizes 10000,30000,100000]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import devset  # noqa: E402


def write_stream(path: Path, total: int) -> None:
    events, _ = devset.build(size=3000)
    with path.open("w", encoding="utf-8") as out:
        written = 0
        round_ = 0
        while written < total:
            for event in events:
                if written == total:
                    break
                out.write(
                    json.dumps(
                        {"id": f"r{round_}-{event['id']}", "text": event["text"], "ts": event["ts"]}, ensure_ascii=False
                    )
                    + "\n"
                )
                written += 1
            round_ += 1


def run_scan(source: Path, workdir: Path) -> tuple[float, float]:
    """(peak RSS in MiB, seconds) of one ``neardup scan`` process."""
    command = [
        sys.executable,
        "-m",
        "worker.cli.main",
        "scan",
        str(source),
        "-o",
        str(workdir / "out.jsonl"),
        "--state",
        str(workdir / "state"),
    ]
    started = time.perf_counter()
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"neardup scan failed on {source}")
    return usage.ru_maxrss / 1024, elapsed


def head(source: Path, target: Path, count: int) -> None:
    with source.open("rb") as src, target.open("wb") as out:
        for number, line in enumerate(src):
            if number == count:
                break
            out.write(line)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,30000,100000")
    parser.add_argument("--write", nargs=2, metavar=("PATH", "EVENTS"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.write:
        write_stream(Path(args.write[0]), int(args.write[1]))
        return
    sizes = [int(s) for s in args.sizes.split(",")]
    with tempfile.TemporaryDirectory(prefix="neardup-mem-") as tmp:
        root = Path(tmp)
        full = root / "stream.jsonl"
        # Built in a child process: a forked scan inherits (and rusage counts) the parent's pages,
        # so this process must stay small for the children's peaks to be their own.
        subprocess.run([sys.executable, __file__, "--write", str(full), str(max(sizes))], check=True)
        print(f"{'events':>8} {'peak RSS MiB':>13} {'vs first':>9} {'seconds':>8} {'docs/s':>8}")
        first = None
        for size in sizes:
            source = root / f"stream-{size}.jsonl"
            head(full, source, size)
            workdir = root / f"run-{size}"
            workdir.mkdir()
            rss, seconds = run_scan(source, workdir)
            first = first or rss
            print(f"{size:>8} {rss:>13.1f} {rss / first:>8.2f}x {seconds:>8.1f} {size / seconds:>8.0f}")


if __name__ == "__main__":
    main()
