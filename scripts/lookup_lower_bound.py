"""How close to its floor a pure-Python lookup can get at all (docs/benchmarks.md, "The lower
bound of a pure-Python lookup").

The kernel benchmark reports ``lookup / floor``. This script asks what the cheapest lookup that
still gives the answer DESIGN.md requires ("excluded versions with reasons, successors") would
cost, on the same store, against the same floor, in the same run:

* ``floor``: the benchmark's floor (bench/_floor.py): the admitted rows only, as tuples.
* ``evidence``: ``Vigente.evidence()``, as the benchmark times it.
* ``statement``: the store's own candidates statement alone (rows fetched, nothing decoded).
* two other statements for the same candidate rows, each on a copy of the store with three more
  indexes (``versions_valid_to``, ``versions_known_from``, ``versions_known_to``), each timed
  alone and then with a **tuple answer** on top:

  - ``seek``: one seek per group of rows (admitted; replaced last; learned next; the period
    ending nearest before t; the one starting nearest after t; other scopes);
  - ``valid_at_t``: every row valid at t whatever its knowledge dates (the admitted rows, the
    ones replaced last and learned next, and what was held at (t, t) are all among them; Python
    picks them), plus one seek each for the nearest periods before and after t and other scopes.

  A tuple answer is the least a lookup must do with the rows: the reason of every candidate,
  its successor, the distinct values, the values held at (t, t), and a one-line statement;
  plain tuples, no :class:`Version`, no :class:`Evidence`. Every tuple answer is checked against
  ``evidence()`` (the same admitted ids, the same excluded ids with the same reasons and
  successors, the same values and earlier values), so the bound is a real answer, not a
  shortcut.

Usage (a store the benchmark made and kept)::

    python -m vigente.bench kernel --versions 100000 --db /tmp/k100k.db
    python scripts/lookup_lower_bound.py /tmp/k100k.db [--lookups 2000] [--rounds 5]

The passes alternate (each round in the opposite order of the one before) so that a change in
the machine's load reaches every reading; p50 per pass, the range over the rounds is printed.
"""

from __future__ import annotations

import argparse
import datetime as dt
import gc
import json
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from vigente.kernel.values import Scope, canonical_json

from vigente.api import Vigente
from vigente.bench._floor import SQLiteFloor
from vigente.bench._lineages import NOW, SEED, make_queries, plan_lineage
from vigente.bench.kernel import PER_LINEAGE, WARMUP
from vigente.store import sqlite as S
from vigente.time import parse_instant

OPEN_END = S.OPEN_END
SEEK_INDEXES = (
    "CREATE INDEX versions_valid_to ON versions (subject_id, valid_to, valid_from, known_from,"
    " known_to)",
    "CREATE INDEX versions_known_from ON versions (subject_id, known_from, known_to, valid_from,"
    " valid_to)",
    "CREATE INDEX versions_known_to ON versions (subject_id, known_to, known_from, valid_from,"
    " valid_to)",
)
COLUMNS = S._SUBJECT_COLUMNS  # rowid, version_id, NULL, NULL, source, value, vf, vt, kf, kt, flags
OTHER_SCOPES = f"""SELECT {S._VERSION_COLUMNS} FROM subjects s JOIN versions v USING (subject_id)
 WHERE s.lineage = :lineage AND s.scope_key <> :scope
   AND v.valid_from <= :t AND v.valid_to > :t AND v.known_from <= :k AND v.known_to > :k"""
ENDED = f"""SELECT {COLUMNS} FROM versions v INDEXED BY versions_valid_to
 WHERE subject_id = :subject AND known_from <= :k AND known_to > :k AND valid_to = (
   SELECT valid_to FROM versions INDEXED BY versions_valid_to
    WHERE subject_id = :subject AND valid_to <= :t AND known_from <= :k AND known_to > :k
    ORDER BY valid_to DESC LIMIT 1)"""
LATER = f"""SELECT {COLUMNS} FROM versions v INDEXED BY versions_valid
 WHERE subject_id = :subject AND known_from <= :k AND known_to > :k AND valid_from = (
   SELECT valid_from FROM versions INDEXED BY versions_valid
    WHERE subject_id = :subject AND valid_from > :t AND known_from <= :k AND known_to > :k
    ORDER BY valid_from LIMIT 1)"""
# Every row valid at t (any knowledge dates), then the two nearest periods and other scopes;
# a last column tells the groups apart (0: valid at t).
VALID_AT_T = f"""SELECT {COLUMNS}, 0 FROM versions v INDEXED BY versions_valid
 WHERE subject_id = :subject AND valid_from <= :t AND valid_to > :t
UNION ALL SELECT *, 1 FROM ({ENDED})
UNION ALL SELECT *, 1 FROM ({LATER})
UNION ALL SELECT *, 1 FROM ({OTHER_SCOPES})"""
# One seek per group (and the rows held at (t, t) as a seventh group, only when asked).
ADMITTED = f"""SELECT {COLUMNS} FROM versions v INDEXED BY versions_valid
 WHERE subject_id = :subject AND valid_from <= :t AND valid_to > :t
   AND known_from <= :k AND known_to > :k"""
REPLACED = f"""SELECT {COLUMNS} FROM versions v INDEXED BY versions_known_to
 WHERE subject_id = :subject AND valid_from <= :t AND valid_to > :t AND known_to > known_from
   AND known_to = (SELECT known_to FROM versions INDEXED BY versions_known_to
    WHERE subject_id = :subject AND known_to <= :k AND known_to > known_from
      AND valid_from <= :t AND valid_to > :t ORDER BY known_to DESC LIMIT 1)"""
LEARNED = f"""SELECT {COLUMNS} FROM versions v INDEXED BY versions_known_from
 WHERE subject_id = :subject AND valid_from <= :t AND valid_to > :t AND known_to > known_from
   AND known_from = (SELECT known_from FROM versions INDEXED BY versions_known_from
    WHERE subject_id = :subject AND known_from > :k AND known_to > known_from
      AND valid_from <= :t AND valid_to > :t ORDER BY known_from LIMIT 1)"""
HELD = f"""SELECT {COLUMNS} FROM versions v INDEXED BY versions_valid
 WHERE subject_id = :subject AND valid_from <= :t AND valid_to > :t
   AND known_from <= :e AND known_to > :e"""
_GROUPS = [ADMITTED, REPLACED, LEARNED, ENDED, LATER, OTHER_SCOPES]
SEEK = " UNION ALL ".join(f"SELECT *, 0 FROM ({g})" for g in _GROUPS)
SEEK_AND_HELD = SEEK + f" UNION ALL SELECT *, 2 FROM ({HELD})"

_EPOCH_DAY = dt.date(1970, 1, 1).toordinal()
_DAY = 86_400_000_000
NOT_YET_KNOWN, NO_LONGER_KNOWN, NOT_YET_VALID, NO_LONGER_VALID = (
    "not_yet_known",
    "no_longer_known",
    "not_yet_valid",
    "no_longer_valid",
)


_DAYS: dict[int, str] = {}


def _day(micros: int) -> str:
    text = _DAYS.get(micros)
    if text is None:
        text = _DAYS[micros] = dt.date.fromordinal(_EPOCH_DAY + micros // _DAY).isoformat()
    return text


Answer = tuple[Any, ...]


def tuple_answer(
    lineage: str, t: int, k: int, candidates: list[tuple[Any, ...]], held: list[tuple[Any, ...]]
) -> Answer:
    """What decide() works out, over tuples: reasons, successors, values, earlier values and a
    statement. ``candidates`` are in insertion order (rowid), as the store hands them over."""
    admitted = []
    excluded = []
    loads = json.loads
    for row in candidates:
        _, vid, _, _, source, _, vf, vt, kf, kt, _ = row[:11]
        if k < kf:
            excluded.append((vid, NOT_YET_KNOWN, None))
        elif k >= kt:
            successor = None
            for other in candidates:  # written when this one was closed, valid at t first
                if other[8] == kt and other is not row and other[4] == source:
                    if other[6] <= t < other[7]:
                        successor = other[1]
                        break
                    if successor is None:
                        successor = other[1]
            excluded.append((vid, NO_LONGER_KNOWN, successor))
        elif t < vf:
            excluded.append((vid, NOT_YET_VALID, None))
        elif t >= vt:
            best = None
            if vt < OPEN_END:  # the next period known at k
                for other in candidates:
                    start = other[6]
                    if start >= vt and other is not row and other[4] == source:
                        if other[8] <= k < other[9] and (best is None or (start, other[1]) < best):
                            best = (start, other[1])
            excluded.append((vid, NO_LONGER_VALID, None if best is None else best[1]))
        else:
            admitted.append(row)
    groups: dict[str, list[tuple[Any, ...]]] = {}
    for row in admitted:
        groups.setdefault(row[5], []).append(row)
    values = tuple([loads(text) for text in groups])
    earlier = tuple([loads(text) for text in {row[5]: None for row in held}])
    if len(values) == 1:
        first = admitted[0]
        until = "" if first[7] >= OPEN_END else f" until {_day(first[7])} (exclusive)"
        statement = (
            f"{lineage} on {_day(t)}, as known on {_day(k)}: {values[0]} (source: {first[4]}, "
            f"valid from {_day(first[6])}{until})"
        )
    elif values:
        statement = f"{lineage} on {_day(t)}, as known on {_day(k)}: conflict, {len(values)} values"
    else:
        statement = f"no record for {lineage} on {_day(t)} as known on {_day(k)} (not zero)"
    return len(values), values, tuple(r[1] for r in admitted), tuple(excluded), earlier, statement


def _by_rowid(row: tuple[Any, ...]) -> Any:
    return row[0]


def valid_at_t_answer(
    conn: sqlite3.Connection, lineage: str, params: dict[str, Any], held_asked: bool
) -> Answer:
    rows = conn.execute(VALID_AT_T, params).fetchall()
    t, k = params["t"], params["k"]
    replaced = learned = None
    for row in rows:
        if row[11] == 0 and row[9] > row[8]:
            kf, kt = row[8], row[9]
            if kt <= k and (replaced is None or kt > replaced):
                replaced = kt
            if kf > k and (learned is None or kf < learned):
                learned = kf
    candidates = [
        row
        for row in rows
        if row[11]
        or row[8] <= k < row[9]
        or row[9] > row[8]
        and (row[9] == replaced or row[8] == learned)
    ]
    candidates.sort(key=_by_rowid)
    held = [row for row in rows if row[11] == 0 and row[8] <= t < row[9]] if held_asked else []
    return tuple_answer(lineage, t, k, candidates, held)


def seek_answer(
    conn: sqlite3.Connection, lineage: str, params: dict[str, Any], held_asked: bool
) -> Answer:
    rows = conn.execute(SEEK_AND_HELD if held_asked else SEEK, params).fetchall()
    return answer_from_seek_rows(lineage, params, rows)


def answer_from_seek_rows(
    lineage: str, params: dict[str, Any], rows: list[tuple[Any, ...]]
) -> Answer:
    candidates = [row for row in rows if row[11] != 2]
    candidates.sort(key=_by_rowid)
    held = [row for row in rows if row[11] == 2]
    return tuple_answer(lineage, params["t"], params["k"], candidates, held)


def agrees(answer: Answer, evidence: Any) -> bool:
    _, values, admitted, excluded, earlier, _ = answer
    return (
        set(admitted) == {v.version_id for v in evidence.admitted}
        and set(excluded)
        == {(e.version.version_id, e.reason.value, e.successor_id) for e in evidence.excluded}
        and {canonical_json(v) for v in values} == {canonical_json(v) for v in evidence.values}
        and (evidence.earlier_values is None and not earlier
             or {canonical_json(v) for v in earlier}
             == {canonical_json(v) for v in evidence.earlier_values or ()})
    )  # fmt: skip


def connect(path: str) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None)
    for pragma in S.CONNECTION_PRAGMAS:
        conn.execute(pragma)
    return conn


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("db", help="a store kept by `python -m vigente.bench kernel --db FILE`")
    parser.add_argument("--lookups", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    if not Path(args.db).is_file():
        print(f"Error: {args.db} does not exist: make it with "
              f"`python -m vigente.bench kernel --db {args.db}`", file=sys.stderr)  # fmt: skip
        return 1
    with tempfile.TemporaryDirectory() as scratch:
        copy = str(Path(scratch) / "seek.db")
        shutil.copyfile(args.db, copy)
        with connect(copy) as c:
            for statement in SEEK_INDEXES:
                c.execute(statement)
            c.execute("ANALYZE")
        return _measure(args.db, copy, args.lookups, args.rounds)


def _measure(path: str, seek_path: str, lookups: int, rounds: int) -> int:
    conn, seek_conn = connect(path), connect(seek_path)
    lineages = conn.execute("SELECT count(*) FROM subjects").fetchone()[0]
    versions = conn.execute("SELECT count(*) FROM versions").fetchone()[0]
    plans = [plan_lineage(i, PER_LINEAGE, SEED) for i in range(lineages)]
    queries = make_queries(plans, lookups + WARMUP, SEED)[WARMUP:]
    now = parse_instant(NOW)
    scope_key = Scope().key
    subjects = dict(conn.execute("SELECT lineage, subject_id FROM subjects").fetchall())
    vg = Vigente.open(path)
    answers = [vg.evidence(q.lineage, valid_at=q.valid_at, known_at=q.known_at, now=NOW)
               for q in queries]  # fmt: skip
    points = []
    for q in queries:
        t = parse_instant(q.valid_at)
        k = now if q.known_at is None else parse_instant(q.known_at)
        held = t < k and not t.same_moment(k) and k.same_moment(now)
        params = {"lineage": q.lineage, "scope": scope_key, "subject": subjects[q.lineage],
                  "t": t.micros, "k": k.micros, "e": t.micros}  # fmt: skip
        points.append((q, params, held))
    checks = {
        "valid_at_t": [valid_at_t_answer(seek_conn, p["lineage"], p, h) for _, p, h in points],
        "seek": [seek_answer(seek_conn, p["lineage"], p, h) for _, p, h in points],
    }
    for name, found in checks.items():
        wrong = sum(not agrees(a, e) for a, e in zip(found, answers, strict=True))
        print(f"{name} tuple answers that differ from evidence(): {wrong} of {len(found)}")
        if wrong:
            return 1
    store_statement = S.SELECT_CANDIDATES_AND_HELD
    fetched = {
        id(point): seek_conn.execute(SEEK_AND_HELD if point[2] else SEEK, point[1]).fetchall()
        for point in points
    }  # the seek statement's rows, for timing the answer alone

    # The benchmark's own floor reader, one on each store.
    floors = SQLiteFloor(path), SQLiteFloor(seek_path)

    def floor(reader: SQLiteFloor) -> Callable[[Any], object]:
        def read(point: Any) -> object:
            _, p, _ = point
            return reader.read(p["lineage"], scope_key, p["t"], p["k"])

        return read

    def evidence(point: Any) -> object:
        q = point[0]
        return vg.evidence(q.lineage, valid_at=q.valid_at, known_at=q.known_at, now=NOW)

    def statement(point: Any) -> object:
        _, p, held = point
        return conn.execute(store_statement if held else S.SELECT_CANDIDATES, p).fetchall()

    # Each pass, with the floor it is divided by: the one on its own store.
    on_store = {"floor": floor(floors[0]), "evidence()": evidence, "store statement": statement}
    on_copy: dict[str, Callable[[Any], object]] = {
        "floor, indexed copy": floor(floors[1]),
        "seek statement": lambda pt: seek_conn.execute(
            SEEK_AND_HELD if pt[2] else SEEK, pt[1]
        ).fetchall(),  # fmt: skip
        "seek tuple answer": lambda pt: seek_answer(seek_conn, pt[1]["lineage"], pt[1], pt[2]),
        "seek answer, rows read": lambda pt: answer_from_seek_rows(
            pt[1]["lineage"], pt[1], fetched[id(pt)]
        ),
        "valid-at-t statement": lambda pt: seek_conn.execute(VALID_AT_T, pt[1]).fetchall(),
        "valid-at-t tuple answer": lambda pt: valid_at_t_answer(
            seek_conn, pt[1]["lineage"], pt[1], pt[2]
        ),
    }
    passes = on_store | on_copy
    p50s: dict[str, list[float]] = {name: [] for name in passes}
    order = list(passes)
    for round_ in range(rounds):
        for name in order if round_ % 2 == 0 else order[::-1]:
            run = passes[name]
            for point in points[:50]:
                run(point)
            gc.collect()
            gc.disable()
            samples = []
            for point in points:
                start = time.perf_counter_ns()
                run(point)
                samples.append(time.perf_counter_ns() - start)
            gc.enable()
            p50s[name].append(statistics.median(samples) / 1000)
    print(f"{versions:,} versions, {lineages:,} lineages, {len(points):,} lookups, "
          f"{rounds} rounds; p50 per pass in µs, and its ratio to the floor of the same store "
          f"in the same round (min..max over the rounds)")  # fmt: skip
    for name, values in p50s.items():
        base = p50s["floor, indexed copy" if name in on_copy else "floor"]
        ratios = [v / b for v, b in zip(values, base, strict=True)]
        print(f"  {name:24s} {min(values):7.1f}..{max(values):7.1f} µs   "
              f"{min(ratios):5.2f}..{max(ratios):5.2f}×")  # fmt: skip
    for closing in (conn, seek_conn, *floors, vg):
        closing.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
