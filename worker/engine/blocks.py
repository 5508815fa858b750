"""Permuted-block tables of Manku, Jain and Das Sarma (WWW 2007), as a pure plan.

Two ``f``-bit fingerprints within Hamming distance ``k`` differ in at most ``k`` of any ``B``
disjoint blocks, so they agree on at least one choice of ``B - k`` blocks (pigeonhole). A table
keyed on the bits of one such choice therefore puts them in the same bucket, and the
``C(B, k)`` tables of all choices together find every near neighbour within ``k``. A two-level
scheme applies the same argument again to the bits left over after the first choice:
``C(B1, k) * C(B2, k)`` tables with longer keys, i.e. smaller buckets.

This module only computes plans and keys; storage lives in :mod:`worker.state.index`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from itertools import combinations
from math import comb

MAX_KEY_BITS = 32
"""Keys are stored as 4 bytes; a longer choice of blocks is cut to its leading 32 bits, which
still keeps every near neighbour (agreeing on all chosen bits implies agreeing on a prefix)."""

MAX_TABLES = 256
"""Table ids are stored as one byte."""

DEFAULT_MAX_BUCKET = 4.0
"""The planner's target for expected stored fingerprints per bucket: a probe reads a few
rows at most, while each extra table costs one more seek per probe and one more row per
fingerprint on disk."""

_RECENT_KEYS = 4096  # fingerprints whose keys Plan.keys remembers (cleared when full)

_SPEC = re.compile(r"^\s*(\d+)\s*[xX]\s*(\d+)\s*$")


def hamming(a: int, b: int) -> int:
    """Number of differing bits between two fingerprints."""
    return (a ^ b).bit_count()


def _split(positions: tuple[int, ...], blocks: int) -> tuple[tuple[int, ...], ...]:
    """Cut positions into ``blocks`` contiguous runs, sizes differing by at most one (larger first)."""
    size, extra = divmod(len(positions), blocks)
    out: list[tuple[int, ...]] = []
    start = 0
    for i in range(blocks):
        end = start + size + (1 if i < extra else 0)
        out.append(positions[start:end])
        start = end
    return tuple(out)


@dataclass(frozen=True)
class Table:
    """One permuted table: ``positions`` (bit indices, 0 = most significant) form its key, in key order.

    The table's permutation moves these bits to the front, keeping the remaining bits in
    their original order; the key is the leading ``key_bits`` bits of the permuted value.
    """

    f: int
    positions: tuple[int, ...]
    _segments: tuple[tuple[int, int, int], ...] = field(default=(), compare=False, repr=False)

    def __post_init__(self) -> None:
        if not self.positions:
            raise ValueError("a table needs at least one key bit")
        if len(set(self.positions)) != len(self.positions) or not all(0 <= p < self.f for p in self.positions):
            raise ValueError(f"key positions must be distinct bits of a {self.f}-bit fingerprint")
        # Consecutive positions form runs extracted with one shift-and-mask each.
        segments: list[tuple[int, int, int]] = []
        out_shift = len(self.positions)
        i = 0
        while i < len(self.positions):
            j = i
            while j + 1 < len(self.positions) and self.positions[j + 1] == self.positions[j] + 1:
                j += 1
            length = j - i + 1
            out_shift -= length
            source_shift = self.f - 1 - self.positions[j]
            segments.append((source_shift, (1 << length) - 1, out_shift))
            i = j + 1
        object.__setattr__(self, "_segments", tuple(segments))

    @property
    def key_bits(self) -> int:
        return len(self.positions)

    def key(self, fp: int) -> int:
        """The bucket key of ``fp`` in this table."""
        key = 0
        for source_shift, mask, out_shift in self._segments:
            key |= ((fp >> source_shift) & mask) << out_shift
        return key

    def permutation(self) -> tuple[int, ...]:
        """Source bit index of every output bit: the key bits first, then the rest in order."""
        chosen = set(self.positions)
        return self.positions + tuple(p for p in range(self.f) if p not in chosen)

    def permute(self, fp: int) -> int:
        """``fp`` with its bits rearranged by :meth:`permutation` (key = leading ``key_bits`` bits)."""
        out = 0
        for source in self.permutation():
            out = (out << 1) | ((fp >> (self.f - 1 - source)) & 1)
        return out


@dataclass(frozen=True)
class Scheme:
    """A family of tables: single-level ``(B,)`` or two-level ``(B1, B2)`` block counts."""

    f: int
    k: int
    levels: tuple[int, ...]

    def tables(self) -> tuple[Table, ...]:
        all_bits = tuple(range(self.f))
        return tuple(Table(self.f, positions[:MAX_KEY_BITS]) for positions in self._choices(all_bits, self.levels))

    def _choices(self, bits: tuple[int, ...], levels: tuple[int, ...]) -> list[tuple[int, ...]]:
        """Key positions of every table: keep ``B - k`` blocks at this level, recurse on the rest."""
        blocks = _split(bits, levels[0])
        out: list[tuple[int, ...]] = []
        for kept in combinations(range(levels[0]), levels[0] - self.k):
            lead = tuple(p for b in kept for p in blocks[b])
            if len(levels) == 1:
                out.append(lead)
                continue
            rest = tuple(p for b in range(levels[0]) if b not in kept for p in blocks[b])
            out.extend(lead + tail for tail in self._choices(rest, levels[1:]))
        return out

    @property
    def table_count(self) -> int:
        count = 1
        for b in self.levels:
            count *= comb(b, self.k)
        return count

    def feasible(self) -> bool:
        """Every block has at least one bit at every level."""
        remaining = self.f
        for b in self.levels:
            if b <= self.k or remaining < b:
                return False
            sizes = sorted(len(block) for block in _split(tuple(range(remaining)), b))
            remaining = sum(sizes[: self.k])
        return True


def _schemes(f: int, k: int) -> list[Scheme]:
    """Candidate schemes for (f, k): B = k+1 .. k+3 blocks, one or two levels, fewest tables first."""
    sizes = range(k + 1, k + 4)
    found = [Scheme(f, k, (b,)) for b in sizes]
    found += [Scheme(f, k, (b1, b2)) for b1 in sizes for b2 in sizes]
    usable = [s for s in found if s.feasible() and s.table_count <= MAX_TABLES]
    return sorted(usable, key=lambda s: (s.table_count, len(s.levels), s.levels))


def _key_range(tables: tuple[Table, ...]) -> tuple[int, int]:
    widths = [t.key_bits for t in tables]
    return min(widths), max(widths)


def _bits_label(lo: int, hi: int) -> str:
    return str(lo) if lo == hi else f"{lo}..{hi}"


@dataclass(frozen=True)
class Plan:
    """The tables of one index; equal plans produce identical keys (``expected`` is advisory)."""

    f: int
    k: int
    tables: tuple[Table, ...]
    levels: tuple[int, ...] = ()
    expected: int = field(default=0, compare=False)

    def __post_init__(self) -> None:
        if not self.tables:
            raise ValueError("a plan needs at least one table")
        if any(t.f != self.f for t in self.tables):
            raise ValueError("every table must use the plan's fingerprint width")
        object.__setattr__(self, "_recent_keys", {})

    @property
    def name(self) -> str:
        """``TxB`` label, e.g. ``10x25..26``."""
        lo, hi = _key_range(self.tables)
        return f"{len(self.tables)}x{_bits_label(lo, hi)}"

    def keys(self, fp: int) -> tuple[int, ...]:
        """Block key of ``fp`` in every table, in table order.

        The keys of recent fingerprints are remembered: the worker asks for one event's keys
        at its fan-out and again in every index partition's query and write (~10 us each).
        """
        recent: dict[int, tuple[int, ...]] = self._recent_keys  # type: ignore[attr-defined]
        keys = recent.get(fp)
        if keys is None:
            if fp < 0 or fp >> self.f:
                raise ValueError(f"fingerprint {fp!r} is not a {self.f}-bit unsigned integer")
            if len(recent) >= _RECENT_KEYS:
                recent.clear()
            keys = recent[fp] = tuple(t.key(fp) for t in self.tables)
        return keys

    def expected_bucket(self, expected: int | None = None) -> float:
        """Expected stored fingerprints per bucket in the narrowest table (uniform fingerprints)."""
        n = self.expected if expected is None else expected
        return n / (1 << _key_range(self.tables)[0])

    def explain(self) -> str:
        """Why this plan: its blocks, tables, key widths and expected bucket size, with alternatives."""
        lo, hi = _key_range(self.tables)
        lines = [f"plan {self.name} for f={self.f}, k={self.k}, expected {self.expected:,} stored fingerprints"]
        if len(self.levels) >= 1:
            first = _split(tuple(range(self.f)), self.levels[0])
            sizes = ",".join(str(len(b)) for b in first)
            keep = self.levels[0] - self.k
            lines.append(
                f"  {self.f} bits cut into {self.levels[0]} blocks ({sizes}); fingerprints within "
                f"{self.k} bits differ in at most {self.k} blocks, so they agree on some {keep} of them: "
                f"C({self.levels[0]},{keep}) = {comb(self.levels[0], keep)} choices"
            )
        if len(self.levels) == 2:
            b2 = self.levels[1]
            lines.append(
                f"  the remaining bits of each choice are cut again into {b2} blocks, keeping {b2 - self.k}: "
                f"x C({b2},{b2 - self.k}) = {comb(b2, b2 - self.k)}"
            )
        lines.append(
            f"  {len(self.tables)} tables, keys of {_bits_label(lo, hi)} bits (capped at {MAX_KEY_BITS}); "
            f"expected bucket {self.expected:,} / 2^{lo} = {self.expected_bucket():.3g} fingerprints"
        )
        lines.append(
            f"  per probe ~{len(self.tables)} seeks and {len(self.tables) * self.expected_bucket():.3g} rows read"
        )
        others: list[str] = []
        for scheme in _schemes(self.f, self.k):
            tables = scheme.tables()
            if tables == self.tables:
                continue
            slo, shi = _key_range(tables)
            label = f"{len(tables)}x{_bits_label(slo, shi)} (bucket {self.expected / 2**slo:.3g})"
            if label not in others:
                others.append(label)
        if others:
            lines.append("  alternatives: " + ", ".join(others[:8]))
        return "\n".join(lines)

    def to_json(self) -> str:
        """Stable description persisted next to an index so it is never reopened with other keys."""
        return json.dumps(
            {"f": self.f, "k": self.k, "levels": list(self.levels), "tables": [list(t.positions) for t in self.tables]},
            sort_keys=True,
        )

    @classmethod
    def from_json(cls, text: str, expected: int = 0) -> Plan:
        raw = json.loads(text)
        f = int(raw["f"])
        return cls(
            f=f,
            k=int(raw["k"]),
            tables=tuple(Table(f, tuple(int(p) for p in t)) for t in raw["tables"]),
            levels=tuple(int(b) for b in raw["levels"]),
            expected=expected,
        )


def _plan(scheme: Scheme, expected: int) -> Plan:
    return Plan(f=scheme.f, k=scheme.k, tables=scheme.tables(), levels=scheme.levels, expected=expected)


def _check(k: int, expected: int, f: int) -> None:
    if not 1 <= f <= 64:
        raise ValueError(f"fingerprint width f={f} must be 1..64")
    if not 1 <= k < f // 2:
        raise ValueError(f"k={k} must be at least 1 and well below f={f}")
    if expected < 0:
        raise ValueError(f"expected={expected} must be non-negative")


def plan_for(k: int = 3, expected: int = 10_000_000, f: int = 64, max_bucket: float = DEFAULT_MAX_BUCKET) -> Plan:
    """Fewest tables whose narrowest key keeps ``expected / 2^key_bits <= max_bucket``.

    If no scheme reaches the target (very large ``expected`` or ``k``), the one reading the
    fewest rows per probe (tables x bucket) wins, ties going to fewer tables.
    """
    _check(k, expected, f)
    plans: list[Plan] = []
    for scheme in _schemes(f, k):
        plan = _plan(scheme, expected)
        if plan.expected_bucket() <= max_bucket:
            return plan
        plans.append(plan)
    return min(plans, key=lambda p: (len(p.tables) * p.expected_bucket(), len(p.tables)))


def parse_plan(spec: str, k: int, expected: int, f: int = 64) -> Plan:
    """``"auto"`` -> :func:`plan_for`; ``"TxB"`` -> the scheme with T tables whose key widths include B."""
    _check(k, expected, f)
    if spec.strip().lower() == "auto":
        return plan_for(k=k, expected=expected, f=f)
    match = _SPEC.match(spec)
    if not match:
        raise ValueError(f"plan {spec!r} is neither 'auto' nor 'TxB' (tables x key bits, e.g. '10x25')")
    tables, bits = int(match.group(1)), int(match.group(2))
    options: list[str] = []
    for scheme in _schemes(f, k):
        plan = _plan(scheme, expected)
        lo, hi = _key_range(plan.tables)
        label = f"{len(plan.tables)}x{_bits_label(lo, hi)}"
        if label not in options:  # schemes of one table count and key width are one choice here
            options.append(label)
        if len(plan.tables) == tables and lo <= bits <= hi:
            return plan
    raise ValueError(
        f"plan {spec!r} cannot guarantee k={k} on {f}-bit fingerprints; "
        f"plans that do (tables x key bits): {', '.join(options)}"
    )
