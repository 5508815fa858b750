"""Streaming throughput and latency: neardup with 1 and 2 workers vs passthrough jobs.

Run against a broker (``NEARDUP_BOOTSTRAP``, e.g. ``KAFKA_PORT=29092 scripts/kafka-local start``)::

    python bench/stream.py --events 6000 --partitions 4

Each configuration runs twice on fresh topics: once with the whole input sent as fast as
possible (max throughput: events over the time from the first produce to the last verdict),
then at a steady offered load of half that maximum (latency: the verdict record's timestamp,
stamped by the worker's producer, minus the input record's LogAppendTime). With
``--repeat N`` each of those runs N times, the configurations taking turns, and the medians
are printed with the range of the max and of the p99; the load is half the median max.
The passthrough agent reads the same input and writes each record unchanged: the floor
that Faust and the broker alone cost on this machine. It runs in one process, the ceiling
every share is quoted against, and in two sharing the partitions, the floor for two
workers. Three more passthrough jobs anchor the worker's figures (bench/anchors.py, left
out with ``--skip anchors``): Faust taking batches and sending through its producer, as the
worker does; bare aiokafka; and confluent-kafka (librdkafka). All use the worker's producer
settings; the last line quotes one worker's max against each. Each line ends with the CPU time the configuration's worker processes, and a
broker of scripts/kafka-local, used per event in the max run and in the half-load run
(medians), and the cores the workers, broker and sender took together at half load: a
figure near the machine's cores means the half load saturates it. Where Linux lets the bench
count them (:func:`bench.instructions.process_counter`), the instructions the workers'
threads (and their helper's) retired an event follow: two identical workers in one run
agreed within 1 % where their CPU time an event differed by a tenth. A neardup line ends with
the corrections each run published (docs/reliability.md): the max runs are a backlog, which
one worker should read in the total order as ``neardup scan`` reads a file.

With ``--before REV`` one more configuration runs: one worker of that revision's code, in
the same rounds as this tree's, so that a change is measured against the code before it.

The input (``--feed``): ``devset`` (default) is a stream of bench/devset.py — real Chinese
and English text with the edits feeds make, a quarter of it near-duplicate copies, most
stories told once, as in a real feed. ``sample`` is the 200-line shipped sample repeated
under new ids: after the first 200 events every event is an exact copy of up to 14 (at
3000 events) earlier ones, the index's worst case, every probe meeting many candidates.
Warm-up events are the sample under ``warm`` ids either way.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
import urllib.request
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from aiokafka import AIOKafkaProducer
from kafka import KafkaAdminClient, KafkaConsumer, TopicPartition

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench import anchors, devset  # noqa: E402
from bench.baseline import worktree  # noqa: E402
from bench.instructions import process_counter  # noqa: E402
from topology.stages import Topics  # noqa: E402
from topology.topics import create_topics, topics  # noqa: E402
from worker.cli.inputs import default_sample  # noqa: E402

_WARMUP = b"warm"
_WARMUP_EVENTS = 200
_WARMUP_S = 5.0
NEARDUP = "neardup"


CONFIGS = (
    ("passthrough", 1, "faust"),
    ("passthrough 2 workers", 2, "faust"),
    ("neardup 1 worker", 1, NEARDUP),
    ("neardup 2 workers", 2, NEARDUP),
)
"""(label, workers, job) of each configuration the streaming benches compare; a job is
``neardup`` or one of bench/anchors.py's passthroughs.

With ``--exactly-once`` one more runs: one worker with NEARDUP_PROCESSING_GUARANTEE=exactly_once
(:data:`EXACTLY_ONCE`). Its latency is taken, like every other's, from the output records'
timestamps, stamped when sent; a read_committed consumer sees them once their transaction
commits, a few milliseconds later.

Every share is quoted against the first, the passthrough in one process. The passthrough in
two processes is the floor of what two workers cost this box at a given rate: the same
agent, the same broker and sender, and a consumer group of two.
"""


ANCHORS = (
    ("passthrough, Faust batched", 1, "faust-batched"),
    ("passthrough, bare aiokafka", 1, "aiokafka"),
    ("passthrough, confluent-kafka", 1, "confluent"),
)
EXACTLY_ONCE = ("neardup 1 worker, exactly once", 1, NEARDUP)
BEFORE = ("neardup 1 worker, before", 1, NEARDUP)
"""With ``--before REV``: one worker of that revision's code (a ``git worktree`` with the
native extension of its own source, ``bench/baseline.py``), next to this tree's in the same rounds."""
WEB = ("neardup 1 worker, web on, scraped", 1, NEARDUP)
"""With ``--web``: one worker with its web server on (histograms timed, the sampler running),
its ``/metrics`` and ``/stats`` each fetched once a second throughout, as a Prometheus
scraping often and the live page open would. Every other configuration runs without it."""


def scratch_dir() -> Path:
    """Where the benches' workers keep their state and logs (under ``TMPDIR``), created."""
    path = Path(os.environ.get("TMPDIR", "/tmp")) / "neardup-bench-stream"
    path.mkdir(parents=True, exist_ok=True)
    return path


def children() -> list[int]:
    """This process's descendants: the workers :func:`running` started, and their own children
    (a worker's fingerprint helper, and the forkserver it was forked from)."""
    return descendants(os.getpid())


def descendants(pid: int) -> list[int]:
    """Every process below ``pid``, children first."""
    found: list[int] = []
    for kid in own_children(pid):
        found += [kid, *descendants(kid)]
    return found


def own_children(pid: int) -> list[int]:
    """The processes ``pid`` started itself, not theirs."""
    kids: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            kids += [int(kid) for kid in (task / "children").read_text().split()]
        except OSError:  # the thread ended meanwhile
            continue
    return kids


def cpu_seconds(pids: list[int]) -> float:
    """User + system CPU time of ``pids`` so far."""
    return sum(stat_cpu_seconds(Path(f"/proc/{pid}/stat")) for pid in pids)


def rss_kib(pid: int) -> int:
    """The memory ``pid`` holds now (``VmRSS``), in KiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for {pid}")


def stat_cpu_seconds(stat: Path) -> float:
    """User + system CPU time in one /proc ``stat`` file (fields 14 and 15), a process's or a thread's."""
    fields = stat.read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def broker_pids(bootstrap: str) -> list[int]:
    """The broker's pid when ``bootstrap`` is a broker of scripts/kafka-local on this machine, else none."""
    port = bootstrap.split(",")[0].rpartition(":")[2]
    cache = Path(os.environ.get("NEARDUP_CACHE", Path.home() / ".cache" / "neardup"))
    pid_file = Path(os.environ.get("KAFKA_RUN_DIR", cache / "kafka" / f"run-{port}")) / "kafka.pid"
    try:
        pid = int(pid_file.read_text())
    except (OSError, ValueError):
        return []
    return [pid] if Path(f"/proc/{pid}/stat").exists() else []


FEEDS = ("devset", "sample")
_DEVSET_SEED = 11  # not the shipped sample's seed, so the feed does not start with the warm-up's stories


def _events(
    count: int,
    prefix: str = "b",
    feed: str = "devset",
    days: float = 0,
    at: int | None = None,
    seed: int = _DEVSET_SEED,
) -> list[tuple[bytes, bytes]]:
    """``count`` events under the ids ``{prefix}<n>``, keyed by id (``feed``: see the module doc,
    ``seed`` the dev set's); with ``days``, their event times spread evenly over that many days
    from the first; with ``at``, every one's time is that."""
    if feed == "devset":
        texts, _ = devset.build(count, seed)
    else:
        sample = [json.loads(line) for line in Path(default_sample()).read_text().splitlines() if line.strip()]
        texts = [sample[i % len(sample)] for i in range(count)]
    out = []
    for i, text in enumerate(texts):
        event = dict(text)
        event["id"] = f"{prefix}{i:07d}"
        # Without days, an event's time is its append time, as for the warm-up's events: the
        # sample's own times (2024) put the warm-up in other time buckets than the measured
        # events, whose first one then paid for creating the current bucket (~160 ms).
        event.pop("ts", None)
        if days:
            event["ts"] = devset.EPOCH_MS + int(i * days * 86_400_000 / count)
        elif at is not None:
            event["ts"] = at
        out.append((event["id"].encode(), json.dumps(event, ensure_ascii=False).encode()))
    return out


def _start(cmd: list[str], env: dict[str, str], log: Path, tree: Path = REPO) -> subprocess.Popen[bytes]:
    """Start one process of ``tree``'s code (``python -m`` puts the working directory first)."""
    if tree != REPO:
        env = {**env, "PYTHONPATH": str(tree)}
    with log.open("wb") as out:
        return subprocess.Popen(cmd, env=env, cwd=tree, stdout=out, stderr=subprocess.STDOUT)


def _wait_ready(log: Path, timeout: float = 90.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if "Ready" in log.read_text(errors="replace"):
            return
        time.sleep(0.2)
    raise RuntimeError(f"not ready: {log}")


def produce(
    bootstrap: str,
    topic: str,
    events: list[tuple[bytes, bytes]],
    rate: float | None,
    paced_from: float | None = None,
) -> tuple[float, float]:
    """Send every event (at ``rate`` events/s when given, else as fast as possible).

    The pace counts from ``paced_from`` (a ``time.monotonic()`` value, default now), so
    producers in several threads can keep step. Returns the start time and the share of a
    core this process used meanwhile (the sender's, when it sends alone). The sender shares the
    box with the workers, so it is aiokafka's producer (faust's own client), which takes half the
    CPU kafka-python's did (docs/benchmarks.md, "How the bench is set up, and why"), CPU that
    otherwise showed up as the workers' latency.
    """
    return asyncio.run(_produce(bootstrap, topic, events, rate, paced_from))


async def _produce(
    bootstrap: str, topic: str, events: list[tuple[bytes, bytes]], rate: float | None, paced_from: float | None
) -> tuple[float, float]:
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, linger_ms=1 if rate else 5, acks=1)
    await producer.start()
    try:
        started, cpu = time.time(), time.process_time()
        clock = time.monotonic() if paced_from is None else paced_from
        for i, (key, value) in enumerate(events):
            if rate:
                lag = clock + i / rate - time.monotonic()
                if lag > 0:
                    await asyncio.sleep(lag)
            await producer.send(topic, key=key, value=value)
        await producer.flush()
        return started, (time.process_time() - cpu) / (time.time() - started)
    finally:
        await producer.stop()


def wait_quiet(bootstrap: str, topics: list[str], quiet_s: float = 1.0, timeout_s: float = 600) -> None:
    """Return once the end offsets of ``topics`` have not moved for ``quiet_s``.

    The reader of :func:`read_times` fetches every record of the run at once; started while
    the worker still works on the last events, it took CPU from them and added up to
    ~200 ms to their latency. Polling end offsets costs next to nothing.
    """
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
    parts = [TopicPartition(t, p) for t in topics for p in consumer.partitions_for_topic(t) or ()]
    deadline = time.monotonic() + timeout_s
    last: dict[TopicPartition, int] = {}
    since = time.monotonic()
    while time.monotonic() < deadline:
        ends = consumer.end_offsets(parts)
        if ends != last:
            last, since = ends, time.monotonic()
        elif time.monotonic() - since >= quiet_s:
            break
        time.sleep(0.25)
    consumer.close()


def read_times(
    bootstrap: str, events_topic: str, outputs: list[str], count: int, timeout_s: float = 600
) -> tuple[dict[bytes, int], dict[bytes, int]]:
    """Record time of each measured id's input record and of its first output record.

    Reads until ``count`` ids have both (warm-up events do not count), or the timeout.
    """
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
    input_ts: dict[bytes, int] = {}
    output_ts: dict[bytes, int] = {}
    parts = [TopicPartition(t, p) for t in outputs + [events_topic] for p in consumer.partitions_for_topic(t) or ()]
    consumer.assign(parts)
    consumer.seek_to_beginning(*parts)
    deadline = time.monotonic() + timeout_s
    while (len(output_ts) < count or len(input_ts) < count) and time.monotonic() < deadline:
        for tp, msgs in consumer.poll(timeout_ms=500).items():
            for m in msgs:
                if m.key is None or m.key.startswith(_WARMUP):
                    continue
                target = input_ts if tp.topic == events_topic else output_ts
                target.setdefault(m.key, m.timestamp)
    consumer.close()
    return input_ts, output_ts


def count_corrections(bootstrap: str, topic: str) -> int:
    """The records of a run's corrections topic that name a measured id (warm-ups left out)."""
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
    parts = [TopicPartition(topic, p) for p in consumer.partitions_for_topic(topic) or ()]
    consumer.assign(parts)
    consumer.seek_to_beginning(*parts)
    ends, counted = consumer.end_offsets(parts), 0
    while any(consumer.position(tp) < end for tp, end in ends.items()):
        for msgs in consumer.poll(timeout_ms=500).values():
            counted += sum(1 for m in msgs if m.key is not None and not m.key.startswith(_WARMUP))
    consumer.close()
    return counted


def percentile(ordered: list[float], q: float) -> float:
    """The value at rank ``q`` of an ascending, non-empty list (the benches' one definition)."""
    return float(ordered[min(len(ordered) - 1, int(q * len(ordered)))])


def latency_ms(input_ts: dict[bytes, int], output_ts: dict[bytes, int]) -> dict[str, float]:
    """p50/p95/p99 of output time minus input time over the ids that have both."""
    lat: list[float] = sorted(output_ts[k] - input_ts[k] for k in output_ts if k in input_ts)
    return {"p50_ms": percentile(lat, 0.50), "p95_ms": percentile(lat, 0.95), "p99_ms": percentile(lat, 0.99)}


def _measure(
    bootstrap: str,
    names: Topics,
    events: list[tuple[bytes, bytes]],
    outputs: list[str],
    rate: float | None,
    corrections: str = "",
) -> dict[str, float]:
    started, sender_cpu = produce(bootstrap, names.events, events, rate)
    wait_quiet(bootstrap, outputs + ([corrections] if corrections else []))
    input_ts, output_ts = read_times(bootstrap, names.events, outputs, len(events))
    last = max(output_ts.values()) / 1000
    return {
        "events": len(output_ts),
        "started": started,
        "seconds": last - started,
        "events_per_s": len(output_ts) / (last - started),
        "sender_cpu": sender_cpu,
        "corrections": count_corrections(bootstrap, corrections) if corrections else math.nan,
        **latency_ms(input_ts, output_ts),
    }


def fresh_topics(
    bootstrap: str, prefix: str, partitions: int, tmp: Path, lateness_ms: int
) -> tuple[Topics, dict[str, str]]:
    """Create the topics of ``prefix``; returns their names and the environment of its workers."""
    create_topics(bootstrap, topics(prefix, partitions, 1))
    env = {
        **os.environ,
        "NEARDUP_BOOTSTRAP": bootstrap,
        "NEARDUP_TOPIC_PREFIX": prefix,
        "NEARDUP_PARTITIONS": str(partitions),
        "NEARDUP_STATE_DIR": str(tmp / prefix),
        "NEARDUP_ALLOWED_LATENESS_MS": str(lateness_ms),
        "NEARDUP_WEB_PORT": "0",  # on only for the WEB configuration: two workers would share a port
    }
    return Topics(prefix), env


def drop_topics(bootstrap: str, prefix: str) -> None:
    """Delete the topics of ``prefix``: the stages' (``{prefix}.*``) and Faust's own (``{prefix}-*``)."""
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        mine = [t for t in admin.list_topics() if t.startswith((f"{prefix}.", f"{prefix}-"))]
        if mine:
            admin.delete_topics(mine)
    finally:
        admin.close()


def drop_run(bootstrap: str, prefix: str, tmp: Path) -> None:
    """Delete one run's topics (the stages' and Faust's own) and its stores; its logs stay.

    Every run makes fresh topics: left on a local broker, a few dozen runs' partitions made
    the same bench visibly slower (docs/benchmarks.md, "How to read and rerun them").
    """
    drop_topics(bootstrap, prefix)
    for state in (tmp / prefix, tmp / f"{prefix}-passthrough-data"):
        shutil.rmtree(state, ignore_errors=True)


def warm_up(bootstrap: str, names: Topics, events: list[tuple[bytes, bytes]] | None = None) -> None:
    """Dictionaries loaded, stores opened, changelogs checked before anything is measured.

    ``events`` (ids starting with ``warm``) default to the sample feed under warm-up ids.
    """
    produce(bootstrap, names.events, events or _events(_WARMUP_EVENTS, _WARMUP.decode(), "sample"), None)
    time.sleep(_WARMUP_S)


def warm_events_at(ts_ms: int) -> list[tuple[bytes, bytes]]:
    """The warm-up's events with the event time ``ts_ms``: that of measured events with times of
    their own (``days``). Warmed up at append time (now), the index's newest event would be
    years ahead of them, and it would decide every one late, storing none."""
    return _events(_WARMUP_EVENTS, _WARMUP.decode(), "sample", at=ts_ms)


@contextmanager
def running(
    bootstrap: str,
    partitions: int,
    workers: int,
    job: str,
    tmp: Path,
    lateness_ms: int,
    warm_events: list[tuple[bytes, bytes]] | None = None,
    guarantee: str = "at_least_once",
    web: bool = False,
    tree: Path = REPO,
    web_urls: list[str] | None = None,
) -> Iterator[Topics]:
    """Fresh topics with ``workers`` processes of ``job`` (neardup, or a passthrough) started and warmed up;
    with ``web``, their web servers on and scraped once a second (:data:`WEB`); with ``web_urls``,
    their web servers on and their addresses put in that list, for the caller to read."""
    prefix = f"bench{uuid.uuid4().hex[:6]}"
    names, env = fresh_topics(bootstrap, prefix, partitions, tmp, lateness_ms)
    env["NEARDUP_PROCESSING_GUARANTEE"] = guarantee
    procs: list[subprocess.Popen[bytes]] = []
    logs: list[Path] = []
    urls: list[str] = []
    stop = threading.Event()
    try:
        for i in range(workers):
            log = tmp / f"{prefix}-{i}.log"
            worker_env = env
            if web or web_urls is not None:
                port = _free_port()
                worker_env = {**env, "NEARDUP_WEB_PORT": str(port)}
                urls.append(f"http://127.0.0.1:{port}")
            if job == NEARDUP:
                cmd = [sys.executable, "-m", "worker.cli.main", "worker", "--name", f"w{i}", "--loglevel", "info"]
            else:
                cmd = [sys.executable, __file__, "--passthrough-worker", prefix, "--job", job]
                cmd += ["--partitions", str(partitions)]
            procs.append(_start(cmd, worker_env, log, tree if job == NEARDUP else REPO))
            logs.append(log)
        for log in logs:
            _wait_ready(log)
        time.sleep(3.0 if len(procs) > 1 else 0.5)  # let the group settle after the last join
        if web:
            threading.Thread(target=_scrape, args=(urls, stop), daemon=True).start()
        if web_urls is not None:
            web_urls.extend(urls)
        warm_up(bootstrap, names, warm_events)
        yield names
    finally:
        stop.set()
        stop_processes(procs)
        drop_run(bootstrap, prefix, tmp)


def stop_processes(procs: list[subprocess.Popen[bytes]]) -> None:
    """SIGTERM to each, then wait for each (30 s at most, then SIGKILL)."""
    for proc in procs:
        proc.send_signal(signal.SIGTERM)
    for proc in procs:
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _scrape(urls: list[str], stop: threading.Event) -> None:
    """Fetch every worker's ``/metrics`` and ``/stats`` once a second until ``stop``."""
    while urls and not stop.wait(1.0):
        for url in urls:
            for path in ("/metrics", "/stats"):
                try:
                    with urllib.request.urlopen(url + path, timeout=5) as response:
                        response.read()
                except OSError:
                    pass  # not up yet, or stopping


def run(
    bootstrap: str,
    count: int,
    partitions: int,
    workers: int,
    job: str,
    tmp: Path,
    lateness_ms: int,
    rate: float | None = None,
    feed: str = "devset",
    guarantee: str = "at_least_once",
    web: bool = False,
    tree: Path = REPO,
    days: float = 0,
) -> dict[str, float]:
    """One measurement on fresh topics: a backlog as fast as possible, or a steady ``rate``.

    Besides throughput and latency, the CPU time the worker processes (``worker_ms``) and a
    local broker (``broker_ms``, NaN for another cluster) used per event, from the first
    send until the outputs are read back (the read-back's share is a few percent).
    """
    events = _events(count, feed=feed, days=days)
    warm = warm_events_at(devset.EPOCH_MS) if days else None
    with running(
        bootstrap, partitions, workers, job, tmp, lateness_ms, warm, guarantee=guarantee, web=web, tree=tree
    ) as names:
        outputs = [names.unique, names.duplicates] if job == NEARDUP else [names.unique]
        worker_pids, broker = children(), broker_pids(bootstrap)
        worker_cpu, broker_cpu = cpu_seconds(worker_pids), cpu_seconds(broker)
        executed = process_counter(worker_pids)
        result = _measure(bootstrap, names, events, outputs, rate, names.corrections if job == NEARDUP else "")
        result["worker_ms"] = (cpu_seconds(worker_pids) - worker_cpu) * 1000 / count
        result["broker_ms"] = (cpu_seconds(broker) - broker_cpu) * 1000 / count if broker else float("nan")
        result["worker_kinstr"] = executed() / count / 1000 if executed else float("nan")
        return result


def box_cores(result: dict[str, float]) -> float:
    """Cores the workers, the local broker and the sender used together during one run.

    At a steady load this is what the configuration asks of the machine at that rate: near
    the machine's cores, events queue and the latency is the queue's.
    """
    rate = result["events_per_s"]
    return rate * (result["worker_ms"] + result["broker_ms"]) / 1000 + result["sender_cpu"]


def _spread(values: list[float]) -> str:
    """`` [min-max]`` of several runs, nothing for one."""
    return f" [{min(values):.0f}-{max(values):.0f}]" if len(values) > 1 else ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--events",
        type=int,
        default=6000,
        help="events per run (with fewer, start-up is most of the passthrough's max, see docs/benchmarks.md)",
    )
    parser.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="runs per configuration and load; medians are printed, with [min-max] when more than one",
    )
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--lateness-ms", type=int, default=20, help="NEARDUP_ALLOWED_LATENESS_MS of the workers")
    parser.add_argument("--feed", choices=FEEDS, default="devset", help="the input (see above)")
    parser.add_argument(
        "--days",
        type=float,
        default=0,
        help="spread the events' times evenly over this many days (7: every time bucket of the default"
        " retention live, and the first ones expiring)",
    )
    parser.add_argument(
        "--skip",
        action="append",
        default=[],
        choices=["2workers", "anchors"],
        help="leave out the two-process configurations, or the anchors (the one-process passthrough always"
        " runs: it is the floor)",
    )
    parser.add_argument(
        "--exactly-once", action="store_true", help="also run one worker with exactly-once outputs (its cost)"
    )
    parser.add_argument(
        "--web", action="store_true", help="also run one worker with its web server on and scraped (its cost)"
    )
    parser.add_argument("--before", metavar="REV", help="also run one worker of this git revision (see BEFORE)")
    parser.add_argument("--passthrough-worker", metavar="PREFIX", help=argparse.SUPPRESS)
    parser.add_argument("--job", choices=anchors.KINDS, default="faust", help=argparse.SUPPRESS)
    args = parser.parse_args()
    bootstrap = os.environ.get("NEARDUP_BOOTSTRAP", "127.0.0.1:9092")
    if args.passthrough_worker:
        datadir = scratch_dir() / f"{args.passthrough_worker}-passthrough-data" / str(os.getpid())  # one a process
        anchors.main(args.job, bootstrap, args.passthrough_worker, args.partitions, datadir)
        return
    tmp = scratch_dir()
    count = len(_events(args.events, feed=args.feed))  # the dev set stops short of a large --events
    print(
        f"{count} events ({args.feed} feed), {args.partitions} partitions,"
        f" allowed_lateness_ms {args.lateness_ms}, broker {bootstrap}"
        + (f", event times over {args.days:g} days" if args.days else "")
    )
    configs = [c for c in CONFIGS if not ("2workers" in args.skip and c[1] == 2)]
    if "anchors" not in args.skip:
        configs[1:1] = ANCHORS
    if args.exactly_once:
        configs.append(EXACTLY_ONCE)
    if args.web:
        configs.append(WEB)
    before = worktree(args.before) if args.before else REPO
    if args.before:
        configs.append(BEFORE)

    def measure(label: str, workers: int, job: str, rate: float | None = None) -> dict[str, float]:
        guarantee = "exactly_once" if label == EXACTLY_ONCE[0] else "at_least_once"
        return run(
            bootstrap,
            args.events,
            args.partitions,
            workers,
            job,
            tmp,
            args.lateness_ms,
            rate=rate,
            feed=args.feed,
            guarantee=guarantee,
            web=label == WEB[0],
            tree=before if label == BEFORE[0] else REPO,
            days=args.days,
        )

    # Rounds go through every configuration in turn, so a broker warming up or a noisy
    # neighbour weighs on all of them alike rather than on whichever runs first.
    drains: dict[str, list[dict[str, float]]] = {label: [] for label, _, _ in configs}
    for _ in range(args.repeat):
        for label, workers, job in configs:
            drains[label].append(measure(label, workers, job))
    peaks = {label: [r["events_per_s"] for r in runs] for label, runs in drains.items()}
    peak = {label: statistics.median(values) for label, values in peaks.items()}
    steady: dict[str, list[dict[str, float]]] = {label: [] for label, _, _ in configs}
    for _ in range(args.repeat):
        for label, workers, job in configs:
            steady[label].append(measure(label, workers, job, rate=peak[label] / 2))
    floor = peak["passthrough"]
    for label, _, job in configs:
        runs = steady[label]
        p = {q: statistics.median(r[q] for r in runs) for q in ("p50_ms", "p95_ms", "p99_ms", "sender_cpu")}
        cpu = {q: statistics.median(r[q] for r in drains[label]) for q in ("worker_ms", "broker_ms")}
        half = {q: statistics.median(r[q] for r in runs) for q in ("worker_ms", "broker_ms")}
        print(
            f"{label:<31} max {peak[label]:6.0f} events/s{_spread(peaks[label])} ({peak[label] / floor:4.0%} of passthrough)"
            f" | at {peak[label] / 2:4.0f} events/s: latency p50 {p['p50_ms']:4.0f} ms  p95 {p['p95_ms']:4.0f} ms"
            f"  p99 {p['p99_ms']:4.0f} ms{_spread([r['p99_ms'] for r in runs])} (sender {p['sender_cpu']:.2f} core)"
            f" | CPU an event, max/half: worker {cpu['worker_ms']:.2f}/{half['worker_ms']:.2f} ms,"
            f" broker {cpu['broker_ms']:.2f}/{half['broker_ms']:.2f} ms"
            f" | box at half load: {statistics.median(box_cores(r) for r in runs):.2f} of {os.cpu_count()} cores"
            + _instructions(drains[label], runs)
            + _corrections(job, drains[label], runs),
            flush=True,
        )
    print(against_anchors(peak, drains))


def _instructions(drained: list[dict[str, float]], steady: list[dict[str, float]]) -> str:
    """The workers' instructions an event, max/half (medians), where they could be counted."""
    figures = [statistics.median(r["worker_kinstr"] for r in runs) for runs in (drained, steady)]
    if any(math.isnan(figure) for figure in figures):  # no counter here
        return ""
    return f" | instructions an event, max/half: worker {figures[0]:.0f}/{figures[1]:.0f} k"


def _corrections(job: str, drained: list[dict[str, float]], steady: list[dict[str, float]]) -> str:
    """The corrections a neardup configuration published, each run's, max runs / half load."""
    if job != NEARDUP:
        return ""
    counts = [", ".join(f"{r['corrections']:.0f}" for r in runs) for runs in (drained, steady)]
    return f" | corrections, max/half: {counts[0]} / {counts[1]}"


def against_anchors(peak: dict[str, float], drains: dict[str, list[dict[str, float]]]) -> str:
    """One worker's max events/s and CPU an event as a share of each passthrough's (issue 30's yardsticks)."""
    worker = CONFIGS[2][0]
    cpu = {label: statistics.median(r["worker_ms"] for r in runs) for label, runs in drains.items()}
    shares = [
        f"{label.removeprefix('passthrough, ')} {peak[worker] / peak[label]:.0%} of its events/s,"
        f" {cpu[worker] / cpu[label]:.1f}x its CPU an event"
        for label, _, _ in (CONFIGS[0], *ANCHORS)
        if label in peak
    ]
    return f"{worker} against the passthroughs: " + "; ".join(shares)


if __name__ == "__main__":
    main()
