"""Several real processes (and threads) on one database, on PostgreSQL and on SQLite (WAL).

* writers of one timeline are serialised: no lost update, and the final state is what replaying
  every write in journal order gives;
* a transaction of two writes is seen whole or not at all by readers in other processes;
* an answer at a knowledge date k0 never changes while later writes go in (invariant 2);
* a writer killed with SIGKILL in the middle of an import leaves nothing of it behind.

Workers run in separate processes started by a fork server and report what they did through
queues; nothing here depends on timing.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import threading
from pathlib import Path
from typing import Any

import pytest

from vigente import Vigente, parse_instant
from vigente.records.values import Scope

NOW = "2026-09-29"
HISTORY = "svc/limit"  # the timeline all writers race on (source "shared")
PAIR = "svc/pair"  # written as two scopes in one transaction
K0 = "2026-02-01"  # answers at this knowledge date are frozen before the writers start
DAYS = 28

# A fork server: children start from a clean, single-threaded process (no inherited connections
# or pool threads) with vigente already imported, so each one starts in milliseconds.
CTX = multiprocessing.get_context("forkserver")
CTX.set_forkserver_preload(["vigente", "psycopg", "psycopg_pool", __name__])


def day(n: int) -> str:
    return f"2026-02-{n + 1:02d}" if n < DAYS else f"2026-03-{n - DAYS + 1:02d}"


@pytest.fixture(params=["sqlite", "postgres"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh database that several processes can open: a SQLite file (WAL) or PostgreSQL."""
    if request.param == "sqlite":
        return str(tmp_path / "shared.db")
    url: str = request.getfixturevalue("postgres_url")
    return url


def answer(vg: Vigente, t: str, k: str) -> dict[str, Any]:
    """The parts of evidence that invariant 2 freezes (later-known rows may only be added to
    the exclusions, and a closed row's ``known_to`` gets filled in)."""
    e = vg.evidence(HISTORY, valid_at=t, known_at=k, now=NOW)
    return {
        "status": e.status.value,
        "values": list(e.values),
        "interpretation": e.interpretation.value,
        "statement": e.statement,
        "admitted": [(v.version_id, v.value_json, str(v.valid)) for v in e.admitted],
    }


FROZEN_QUESTIONS = [(day(t), k) for t in range(0, DAYS, 3) for k in ("2026-01-15", K0)]


def part_of(version: Any) -> str:
    return str(version.scope.as_dict()["part"])


# -- workers (module level, so that spawned processes can import them) ------------------------
def timeline_writer(url: str, worker: int, rounds: int, out: Any) -> None:
    """Record overlapping periods on the shared timeline; report each write's journal id."""
    done = []
    with Vigente.open(url) as vg:
        for i in range(rounds):
            start = (worker * 7 + i * 5) % DAYS
            end = start + 1 + (worker + i) % 6
            value = {"worker": worker, "round": i}
            result = vg.record(
                HISTORY,
                value,
                valid_from=day(start),
                valid_to=day(end),
                known_at=NOW,
                source="shared",
                now=NOW,
            )
            done.append((result.write_id, value, start, end))
    out.put(("writer", worker, done))


def pair_writer(url: str, worker: int, rounds: int, out: Any) -> None:
    """Record the same value in two scopes in one transaction."""
    with Vigente.open(url) as vg:
        for i in range(rounds):
            with vg.transaction():
                for part in ("a", "b"):
                    vg.record(
                        PAIR,
                        {"worker": worker, "round": i},
                        valid_from="2026-01-01",
                        known_at=NOW,
                        source="pair",
                        scope={"part": part},
                        now=NOW,
                    )
    out.put(("pair", worker, rounds))


Frozen = list[tuple[tuple[str, str], dict[str, Any]]]


def reader(url: str, frozen: Frozen, stop: Any, out: Any) -> None:
    """Until told to stop (and at least a few times): check for torn pairs and changed answers."""
    problems: list[str] = []
    checks = 0
    with Vigente.open(url) as vg:
        while checks < 5 or not stop.is_set():
            checks += 1
            rows = vg.history(PAIR)  # one statement: one consistent snapshot
            open_rows = {
                part: [r.value_json for r in rows if r.known_to is None and part_of(r) == part]
                for part in ("a", "b")
            }
            if open_rows["a"] != open_rows["b"] or len(open_rows["a"]) > 1:
                problems.append(f"torn pair: {open_rows}")
            counts = [sum(part_of(r) == part for r in rows) for part in ("a", "b")]
            if counts[0] != counts[1]:
                problems.append(f"torn pair: {counts} snapshots")
            for (t, k), before in frozen:
                if answer(vg, t, k) != before:
                    problems.append(f"answer at t={t}, k={k} changed")
    out.put(("reader", checks, problems))


def killed_importer(url: str, path: str, after: int, ready: Any) -> None:
    """Import ``path``; after ``after`` rounds of snapshots are appended, say so and wait to be
    killed."""
    with Vigente.open(url) as vg:
        store = vg.store
        real_append = store.append_versions
        appended = 0

        def append_and_report(versions: Any) -> None:
            # Instrumentation on the real store: the import is certainly mid-transaction here.
            nonlocal appended
            real_append(versions)
            appended += 1
            if appended == after:
                ready.set()
                threading.Event().wait(120)  # the parent kills this process meanwhile

        store.append_versions = append_and_report  # type: ignore[method-assign]
        vg.import_jsonl(path, now=NOW)


def opener(url: str, worker: int, out: Any) -> None:
    with Vigente.open(url) as vg:
        vg.record(
            f"svc/opened/{worker}",
            worker,
            valid_from="2026-01-01",
            known_at="2026-01-01",
            source="s",
            now=NOW,
        )
    out.put(worker)


# -- helpers ----------------------------------------------------------------------------------
def run_all(processes: list[Any]) -> None:
    for p in processes:
        p.start()


def join_all(processes: list[Any]) -> None:
    for p in processes:
        p.join(120)
        assert p.exitcode == 0, f"{p.name} exited with {p.exitcode}"


def drain(queue: Any, count: int) -> list[Any]:
    return [queue.get(timeout=120) for _ in range(count)]


def replay(
    writes: list[tuple[int, dict[str, Any], int, int]], days: dict[int, Any]
) -> dict[int, Any]:
    """The timeline a single writer would have produced: every write in journal order."""
    days = dict(days)
    for _, value, start, end in sorted(writes, key=lambda w: w[0]):
        for d in range(start, end):
            days[d] = value
    return days


# -- tests ------------------------------------------------------------------------------------
def test_concurrent_writers_and_readers(db_url: str) -> None:
    with Vigente.open(db_url) as vg:  # knowledge before the race, to freeze answers at K0
        for n, (start, k) in enumerate([(0, "2026-01-10"), (10, "2026-01-20"), (5, K0)]):
            vg.record(HISTORY, n, valid_from=day(start), known_at=k, source="shared", now=NOW)
        before_race_days = {d: 0 if d < 5 else 2 for d in range(DAYS + 6)}
        frozen = [(q, answer(vg, *q)) for q in FROZEN_QUESTIONS]
        before_race = {(v.version_id, v.value_json) for v in vg.history(HISTORY)}

    out, stop = CTX.Queue(), CTX.Event()
    writers = [CTX.Process(target=timeline_writer, args=(db_url, w, 12, out)) for w in range(3)]
    writers += [CTX.Process(target=pair_writer, args=(db_url, w, 8, out)) for w in range(2)]
    readers = [CTX.Process(target=reader, args=(db_url, frozen, stop, out)) for _ in range(2)]
    run_all(readers + writers)
    reports = drain(out, len(writers))
    join_all(writers)
    stop.set()
    reports += drain(out, len(readers))
    join_all(readers)

    writes = [w for kind, _, done in reports if kind == "writer" for w in done]
    for _, checks, problems in (r for r in reports if r[0] == "reader"):
        assert problems == [] and checks >= 5
    with Vigente.open(db_url) as vg:
        rows = vg.history(HISTORY)
        # no lost or duplicated write: every reported write id has its snapshots, once
        ids = [w[0] for w in writes]
        assert len(set(ids)) == len(ids) == 36
        appended_by = {v.version_id.split(".")[0] for v in rows}
        assert {str(i) for i in ids} <= appended_by
        # no lost update: the snapshots known now are exactly the journal-order replay
        expected = replay(writes, before_race_days)
        current = [v for v in rows if v.known_to is None]
        for d, value in expected.items():
            assert [v.value for v in current if v.valid_at(parse_instant(day(d)))] == [value]
        # the past is untouched
        assert before_race <= {(v.version_id, v.value_json) for v in rows}
        for question, before in frozen:
            assert answer(vg, *question) == before
        pair_rows = vg.history(PAIR)
        assert sum(v.known_to is None for v in pair_rows) == 2


def test_a_writer_killed_mid_import_leaves_no_partial_import(db_url: str, tmp_path: Path) -> None:
    with Vigente.open(db_url) as vg:
        vg.record(HISTORY, 1, valid_from="2026-01-01", known_at="2026-01-01", source="s", now=NOW)
        before = [(name, scope, vg.history(name, scope=scope)) for name, scope in vg.lineages()]
    path = tmp_path / "large.jsonl"
    with path.open("w") as f:
        for i in range(2000):
            line = {
                "op": "record",
                "lineage": f"import/{i % 60}",
                "scope": {"env": "prod"},
                "value": i,
                "source": "bulk",
                "valid_from": day(i // 60),
                "known_at": day(i // 60),
            }
            f.write(json.dumps(line) + "\n")
    ready = CTX.Event()
    # An import writes its statements in rounds (Store.write_round): kill it once the first
    # round's snapshots are in its transaction, before it commits.
    importer = CTX.Process(target=killed_importer, args=(db_url, str(path), 1, ready))
    importer.start()
    assert ready.wait(120), "the importer never got its snapshots into its transaction"
    assert importer.pid is not None
    os.kill(importer.pid, signal.SIGKILL)
    importer.join(120)
    assert importer.exitcode == -signal.SIGKILL

    with Vigente.open(db_url) as vg:
        after = [(name, scope, vg.history(name, scope=scope)) for name, scope in vg.lineages()]
        assert after == before
        # nothing is left locked or half-known: an earlier knowledge date than any line of the
        # killed import is still accepted on the timelines it was writing
        result = vg.record(
            "import/0",
            "after",
            valid_from="2026-01-01",
            known_at="2026-01-02",
            source="bulk",
            scope={"env": "prod"},
            now=NOW,
        )
        assert result.changed
        assert [name for name, _ in vg.lineages()] == ["import/0", HISTORY]


def test_processes_opening_a_fresh_database_at_once_migrate_it_once(db_url: str) -> None:
    out = CTX.Queue()
    openers = [CTX.Process(target=opener, args=(db_url, w, out)) for w in range(4)]
    run_all(openers)
    assert sorted(drain(out, 4)) == [0, 1, 2, 3]
    join_all(openers)
    with Vigente.open(db_url) as vg:
        assert [name for name, _ in vg.lineages()] == [f"svc/opened/{w}" for w in range(4)]


def test_threads_share_one_store(db_url: str) -> None:
    """One store object, several threads, each with its own (re-entrant) transactions."""
    errors: list[BaseException] = []
    with Vigente.open(db_url) as vg:

        def work(worker: int) -> None:
            try:
                for i in range(15):
                    with vg.transaction(), vg.transaction():  # the inner one joins the outer
                        for part in ("a", "b"):
                            vg.record(
                                PAIR,
                                {"worker": worker, "round": i},
                                valid_from="2026-01-01",
                                known_at=NOW,
                                source="pair",
                                scope={"part": part},
                                now=NOW,
                            )
                    rows = vg.history(PAIR)
                    assert sum(part_of(r) == "a" for r in rows) == sum(
                        part_of(r) == "b" for r in rows
                    )
            except BaseException as exc:  # reported to the test's thread below
                errors.append(exc)

        threads = [threading.Thread(target=work, args=(w,)) for w in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert errors == []
        rows = vg.history(PAIR)
        assert len(rows) == 2 * 4 * 15
        assert [part_of(r) for r in rows if r.known_to is None] == ["a", "b"]


def test_concurrent_precedence_rules_leave_exactly_one_in_force(db_url: str) -> None:
    """Setting a rule reads the rules in force, closes them and appends; racing setters must
    not both close the same rule and leave two in force."""
    errors: list[BaseException] = []
    with Vigente.open(db_url) as vg:

        def work(worker: int) -> None:
            try:
                for _ in range(10):
                    order = ["a", "b"] if worker % 2 else ["b", "a"]
                    vg.set_precedence(order, known_at="2026-03-01", scope={"env": "x"}, now=NOW)
            except BaseException as exc:  # reported to the test's thread below
                errors.append(exc)

        threads = [threading.Thread(target=work, args=(w,)) for w in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert errors == []
        rules = vg.store.precedence_rules(None, Scope.of({"env": "x"}))
        assert len(rules) == 40
        assert sum(rule.known_to is None for rule in rules) == 1
