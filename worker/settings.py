"""One typed settings object, read from ``NEARDUP_*`` environment variables.

Every knob of neardup lives here with its default and one line of documentation, so the
README table can be generated from (and checked against) this module instead of drifting.
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from functools import cached_property
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from worker.engine.blocks import Plan
    from worker.stream.connection import Connection

ENV_PREFIX = "NEARDUP_"
GUARANTEES = ("at_least_once", "exactly_once")
# The values a setting can take and still mean something (None: no upper bound). A resemblance
# of 5 or a distance of -4 would quietly make every event unique or every event a duplicate.
RANGES: dict[str, tuple[float, float | None]] = {
    "k": (1, 64),
    "max_distance": (0, 64),
    "min_resemblance": (0, 1),
    "min_long_resemblance": (0, 1),
    "min_containment": (0, 1),
    "min_teaser_containment": (0, 1),
    "shingle_n": (1, None),
    "expected_fingerprints": (1, None),
    "min_features": (0, None),
    "anchor_words": (0, None),
    "short_chars": (0, None),
    "short_bands": (0, None),
    "word_bands": (0, None),
    "max_future_skew_ms": (0, None),
    # A minute (_MIN_RETENTION_MS) to a century: longer is no window at all, and inf has no milliseconds.
    "retention_days": (60_000 / 86_400_000, 36_500),
    "max_text_bytes": (1, None),
    "max_id_chars": (1, None),
    "cache_mb": (1, None),
    "memtable_mb": (8, None),
    "partitions": (1, None),
    "replication": (1, None),
    "allowed_lateness_ms": (0, None),
    "reorder_ms": (0, None),
    "web_port": (0, 65535),
    "connect_timeout_s": (0.1, None),
    "shutdown_timeout_s": (0, None),
}
_MIN_RETENTION_MS = 60_000
# How far out of arrival order an index partition's shares may reach it (worker.state.arrivals):
# events of several input partitions, and other workers' shares through Kafka, interleave by
# when their batches ran; a minute covers a worker that lags its peers by that much.
REORDER_MS = 60_000
# Kafka's topic names: these characters, 249 at most; the prefix leaves room for the longest
# name made from it ("{prefix}.verdict-changelog").
_MAX_PREFIX = 249 - len(".verdict-changelog")
_TOPIC_PREFIX = re.compile(rf"[A-Za-z0-9._-]{{1,{_MAX_PREFIX}}}")
# What changes the fingerprint, sketch or keys a text is stored under (the plan aside). Not
# word_bands: band i is the same key whatever their number, so texts stored with another count
# are still found through the bands both have, and a deployment may change it on a restart.
FEATURE_SETTINGS = (
    "shingle_n",
    "strip_links",
    "strip_tags",
    "fold_words",
    "min_features",
    "anchor_words",
    "short_chars",
    "short_bands",
)
# What an event is decided by: the thresholds of its verdict, and the limits past which it is
# dead-lettered instead. Free to change between runs (nothing stored depends on them), but every
# worker of a deployment running at once must share them (worker/cli/deployment.py).
DECISION_SETTINGS = (
    "max_distance",
    "min_resemblance",
    "min_long_resemblance",
    "min_containment",
    "min_teaser_containment",
    "max_text_bytes",
    "max_id_chars",
    "max_depth",
    "max_future_skew_ms",
)
# Settings `neardup scan` also takes as flags (worker/cli/parser.py), named with them in refusals.
FLAGGED = {
    "k",
    "max_distance",
    "shingle_n",
    "partitions",
    "min_resemblance",
    "min_long_resemblance",
    "min_containment",
    "min_teaser_containment",
}


def _setting(default: Any, doc: str) -> Any:
    return field(default=default, metadata={"doc": doc})


@dataclass(frozen=True)
class Settings:
    """All of neardup's configuration; ``Settings.from_env()`` reads ``NEARDUP_<FIELD>``."""

    # --- fingerprinting -------------------------------------------------------------------
    k: int = _setting(3, "Hamming distance the block tables guarantee to find (Manku et al.: 3 for 64 bits).")
    plan: str = _setting(
        "auto",
        "Block-table plan: 'auto' (chosen from k and expected_fingerprints) or 'TxB', e.g. '10x25'.",
    )
    expected_fingerprints: int = _setting(
        10_000_000, "How many fingerprints the index is sized for; drives the planner's key width."
    )
    shingle_n: int = _setting(2, "Word n-gram shingles added to unigrams as SimHash features (1 = unigrams only).")
    strip_links: bool = _setting(True, "Drop URLs and e-mail addresses before fingerprinting.")
    strip_tags: bool = _setting(True, "Drop @mentions and #hashtags before fingerprinting.")
    fold_words: bool = _setting(
        True,
        "Fingerprint a word of Latin letters by its skeleton (its first letter and the consonants after it, "
        "a doubled one once), so a copy's dropped, doubled or mistyped vowels and letters swapped around one "
        "change none of its features. Indexes and deployments made before this setting hold unfolded words: "
        "they are opened with false, or rebuilt.",
    )
    min_features: int = _setting(6, "Below this many distinct words a text matches only on its normalised exact hash.")
    anchor_words: int = _setting(
        12, "Words in the opening and closing anchors that nominate teasers and edited copies (0 = off)."
    )
    short_chars: int = _setting(
        300,
        "Texts of at most this many normalised characters also get a character 3-gram sketch, a numbers mask "
        "and band keys, and two such texts are compared on them (0 = off).",
    )
    short_bands: int = _setting(
        8, "Band keys (three character-sketch minima each) that nominate a short text's copies."
    )
    word_bands: int = _setting(
        8,
        "Band keys (three word-sketch minima each) that nominate a longer text's copies with slips in many of "
        "its words, which break its anchors and move its SimHash past the tables, and a copy on the other side "
        "of short_chars from a text of half short_chars and more (0 = off). May change on a restart: what was "
        "stored with another count is found through the bands both have.",
    )
    max_distance: int = _setting(
        12,
        "Largest Hamming distance a candidate found in the tables may have and still be verified "
        "(one found by an anchor has no bound).",
    )
    min_resemblance: float = _setting(
        0.6, "Estimated Jaccard resemblance (MinHash) above which a candidate is a duplicate."
    )
    min_long_resemblance: float = _setting(
        0.5,
        "Resemblance above which two texts both longer than short_chars are duplicates: their word sketches "
        "hold a hundred features and more, so the estimate is tight, and a copy with slips in one word of "
        "twenty is still above it.",
    )
    min_containment: float = _setting(
        0.8,
        "Estimated containment of the shorter text in the longer above which a candidate is a duplicate.",
    )
    min_teaser_containment: float = _setting(
        0.8,
        "The same for a short text against a long one (a teaser and its story) that does not begin "
        "the long one (a header on top, slips), which lead windows would have told exactly: estimated "
        "from a resemblance of a few hundredths, a true teaser's containment spreads well below 1.",
    )
    max_text_bytes: int = _setting(
        512 * 1024,
        "Events whose UTF-8 text is longer are rejected (dead-lettered), and records longer than this plus "
        "64 KiB as sent, before they are read (a character sent as a \\u escape counts its 6 bytes); Kafka's "
        "default record limit is 1 MiB.",
    )
    max_id_chars: int = _setting(256, "Events whose id is longer are rejected (dead-lettered).")
    max_depth: int = _setting(
        32,
        "Events nested deeper (the event object is level 1) are rejected: every stage must decode what it stored, "
        "deep inside its own call stack.",
    )
    retention_days: float = _setting(7.0, "Events older than this (event time) stop being candidates and are removed.")
    max_future_skew_ms: int = _setting(
        3_600_000,
        "Events whose ts is further ahead of the wall clock are rejected, so one bad clock cannot expire the index.",
    )

    # --- storage ---------------------------------------------------------------------------
    state_dir: str = _setting("./state", "Directory of the RocksDB state (index tables and seen ids).")
    cache_mb: int = _setting(
        64,
        "RocksDB block cache (MiB), one for all of a worker's stores. Probes stay well under 1 ms while "
        "the index (~500 B per stored fingerprint) is in it or in the OS page cache; beyond that they read from disk.",
    )
    memtable_mb: int = _setting(
        256,
        "RocksDB memtables (MiB) of all of a worker's stores together (one write buffer manager); "
        "each store's write-ahead log is bounded to a quarter of it.",
    )
    worker_name: str = _setting(
        "",
        "Names this worker's state directory under state_dir (default: host name; two workers on one host need two names).",
    )

    # --- streaming -------------------------------------------------------------------------
    bootstrap: str = _setting("127.0.0.1:9092", "Kafka bootstrap servers (comma-separated).")
    topic_prefix: str = _setting("neardup", "Prefix of every topic neardup reads, writes or creates.")
    partitions: int = _setting(
        4,
        "Partitions of the topics created, and the count every worker routes internal messages over: "
        "a worker refuses to start when the internal topics have another count.",
    )
    replication: int = _setting(1, "Replication factor of created topics.")
    allowed_lateness_ms: int = _setting(
        20,
        "How long a verdict waits for a possibly earlier original racing through another partition "
        "(a worker owning every partition stops waiting once all input partitions are past it; catching up "
        "on a backlog, it waits up to 5 s more for a partition not read to its end: raise this for a "
        "backfill to make corrections rarer still).",
    )
    reorder_ms: int = _setting(
        REORDER_MS,
        "How far behind in append time another worker's shares may reach an index partition: an expired "
        "time bucket stays readable that much longer for them (a worker that has owned every partition "
        "for that long expires it once every input partition is past it).",
    )
    fingerprint_helper: bool = _setting(
        True,
        "Fingerprint input batches in a helper process, on another core, while the worker indexes the batch "
        "before (false = in the worker's own process).",
    )
    log_batches: bool = _setting(
        False,
        "Log one line per input batch: how long its events waited before it started, how long it took.",
    )
    processing_guarantee: str = _setting(
        "at_least_once",
        "'at_least_once', or 'exactly_once': outputs are published in Kafka transactions, so a consumer "
        "reading them with isolation.level=read_committed sees one verdict record per id across crashes.",
    )
    shutdown_timeout_s: float = _setting(
        15.0,
        "Longest a worker takes to stop on SIGTERM/SIGINT; past it, it logs what it abandons and exits "
        "(uncommitted input is read again on restart).",
    )
    connect_timeout_s: float = _setting(
        10.0, "How long a command waits to reach Kafka before it gives up with a one-line error."
    )
    web_port: int = _setting(
        6066,
        "Port of the worker's HTTP server: /metrics, /healthz, the live page, /explain, /check "
        "(0 = no server, no histograms). Two workers on one host need two ports.",
    )
    web_bind: str = _setting("127.0.0.1", "Address the worker's HTTP server listens on (0.0.0.0 = every interface).")
    web_url: str = _setting(
        "",
        "URL at which other workers and the CLI reach this worker (default http://<web_bind>:<web_port>, "
        "with the host name when bound to every interface).",
    )
    security_protocol: str = _setting(
        "PLAINTEXT", "Kafka security protocol (PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL)."
    )
    sasl_mechanism: str = _setting("", "SASL mechanism (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512) when SASL is used.")
    sasl_username: str = _setting("", "SASL user name.")
    sasl_password: str = _setting("", "SASL password.")
    ssl_cafile: str = _setting("", "CA bundle for SSL connections.")

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, **overrides: Any) -> Settings:
        """Defaults, overridden by ``NEARDUP_*`` variables, overridden by keyword arguments."""
        env = os.environ if environ is None else environ
        values: dict[str, Any] = {}
        for f in fields(cls):
            raw = env.get(ENV_PREFIX + f.name.upper())
            if raw is not None:
                values[f.name] = _parse(f.type, raw, f.name)
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)

    def __post_init__(self) -> None:
        self._check_ranges()  # first: NaN or inf would fail what follows with a message naming nothing
        if self.processing_guarantee not in GUARANTEES:
            raise ValueError(
                f"{ENV_PREFIX}PROCESSING_GUARANTEE={self.processing_guarantee!r} is not one of {', '.join(GUARANTEES)}"
            )
        if self.max_depth < 2:
            raise ValueError(f"{ENV_PREFIX}MAX_DEPTH={self.max_depth} must be at least 2 (an event with a field)")
        if self.retention_ms < _MIN_RETENTION_MS:  # a zero window stored nothing and dead-lettered every event
            raise ValueError(
                f"{ENV_PREFIX}RETENTION_DAYS={self.retention_days:g} keeps under a minute of event time; it must be "
                f"at least {_MIN_RETENTION_MS / 86_400_000:.6f} (a minute)"
            )
        if not _TOPIC_PREFIX.fullmatch(self.topic_prefix):
            raise ValueError(
                f"{ENV_PREFIX}TOPIC_PREFIX={self.topic_prefix!r} cannot start a Kafka topic name: it must be 1 to "
                f"{_MAX_PREFIX} letters, digits, '.', '_' or '-'"
            )

    def _check_ranges(self) -> None:
        for name, (low, high) in RANGES.items():
            value = getattr(self, name)
            if not low <= value or (high is not None and not value <= high):  # NaN is neither
                bounds = f"between {low:g} and {high:g}" if high is not None else f"at least {low:g}"
                source = ENV_PREFIX + name.upper() + (f" or --{name.replace('_', '-')}" if name in FLAGGED else "")
                raise ValueError(f"{name} ({source}) is {value}; it must be {bounds}")

    @property
    def exactly_once(self) -> bool:
        return self.processing_guarantee == "exactly_once"

    @property
    def retention_ms(self) -> int:
        return int(self.retention_days * 86_400_000)

    @property
    def group(self) -> str:
        """The workers' consumer group (Faust's app id): who is running, and who owns what."""
        return f"{self.topic_prefix}-worker"

    @cached_property
    def connection(self) -> Connection:
        """How every client reaches Kafka (checked once: a blank bootstrap or SASL without a mechanism fails)."""
        from worker.stream.connection import Connection

        return Connection.parse(
            self.bootstrap,
            self.security_protocol,
            self.sasl_mechanism,
            self.sasl_username,
            self.sasl_password,
            self.ssl_cafile,
        )

    @property
    def web_address(self) -> str:
        """This worker's URL as its peers and the CLI use it (``web_url``, or derived from the bind)."""
        if self.web_url:
            return self.web_url.rstrip("/")
        host = self.web_bind
        if host in ("0.0.0.0", "::", ""):
            import socket

            host = socket.gethostname()
        return f"http://{host}:{self.web_port}"

    @cached_property
    def stored_features(self) -> dict[str, int | bool]:
        """The settings that shape what an index stores for a text (its SimHash, sketch and
        keys), by their variables: a store keeps them, and refuses to be read with others,
        where copies would silently stop finding what was stored before."""
        return {ENV_PREFIX + name.upper(): getattr(self, name) for name in FEATURE_SETTINGS}

    @property
    def decision(self) -> dict[str, int | float]:
        """What events are decided by (:data:`DECISION_SETTINGS`), by their variables."""
        return {ENV_PREFIX + name.upper(): getattr(self, name) for name in DECISION_SETTINGS}

    @cached_property
    def block_plan(self) -> Plan:
        """The block tables, parsed (or planned, for 'auto') once."""
        from worker.engine.blocks import parse_plan

        return parse_plan(self.plan, self.k, self.expected_fingerprints)

    def replace(self, **changes: Any) -> Settings:
        return dataclasses.replace(self, **changes)

    @classmethod
    def documented(cls) -> list[tuple[str, str, str]]:
        """(variable, default, doc) rows for the README table."""
        return [(ENV_PREFIX + f.name.upper(), repr(f.default), f.metadata["doc"]) for f in fields(cls)]


def _parse(type_name: Any, raw: str, name: str) -> Any:
    kind = type_name if isinstance(type_name, str) else type_name.__name__
    try:
        if kind == "bool":
            lowered = raw.strip().lower()
            if lowered in {"1", "true", "yes", "on"}:
                return True
            if lowered in {"0", "false", "no", "off"}:
                return False
            raise ValueError(raw)
        if kind == "int":
            return int(raw)
        if kind == "float":
            return float(raw)
        return raw
    except ValueError:
        raise ValueError(f"{ENV_PREFIX}{name.upper()}={raw!r} is not a valid {kind}") from None


# NEARDUP_* variables that are not settings: scripts/kafka-local's cache root, the engine's
# table cache (worker/engine/disk_cache.py) and the test suite's artefacts directory.
OTHER_VARIABLES = frozenset({"NEARDUP_CACHE", "NEARDUP_CACHE_DIR", "NEARDUP_TEST_ARTIFACTS"})


def unknown_variables(environ: Mapping[str, str]) -> list[str]:
    """A line for each ``NEARDUP_*`` variable set that neardup does not read, with the setting
    its name is closest to: a mistyped setting is otherwise ignored without a word."""
    import difflib

    known = sorted(f.name.upper() for f in fields(Settings))
    lines = []
    for name in sorted(n for n in environ if n.startswith(ENV_PREFIX) and n not in OTHER_VARIABLES):
        given = name[len(ENV_PREFIX) :]
        if given in known:
            continue
        close = [k for k in known if given.startswith(k + "_")] or difflib.get_close_matches(
            given, known, n=1, cutoff=0.7
        )
        hint = f" (did you mean {ENV_PREFIX}{close[0]}?)" if close else " (README.md, 'Settings', lists them)"
        lines.append(f"{name} is not a setting of neardup and is ignored{hint}")
    return lines
