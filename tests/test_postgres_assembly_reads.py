"""The PostgreSQL read path of an assembly: the runtime graph's reads take a pooled connection
without the checkout test (as lookups do, ``PostgresStore._unchecked``) and read in binary.
These tests kill every pooled connection behind the store's back and check that assemblies
still answer, with the same selection and messages; and that the reads give inside a write
transaction (pipeline mode) what they give outside."""

from __future__ import annotations

from tests.conformance.test_assembly_reads import C, T, _digests, _events
from tests.postgres_server import kill_connections
from vigente import Vigente
from vigente.store.postgres import PostgresStore
from vigente.time import parse_instant

AS_OF = T.format(9)



def _assembled(vg: Vigente) -> list[object]:
    out: list[object] = []
    for budget in (60, 4_000):  # one that drops, one that keeps everything
        a = vg.assembly.assemble(C, "main", "agent", budget=budget, as_of=AS_OF, persist=False)
        record = {k: v for k, v in a.record.items() if k not in ("created_at", "timings_ms")}
        out.append((record, a.messages, a.system))
    return out


def test_assemblies_answer_after_every_pooled_connection_was_killed(postgres_url: str) -> None:
    store = PostgresStore(postgres_url, min_size=3, max_size=3)
    with Vigente(store) as vg:
        vg.runtime.import_events(_events())
        before = _assembled(vg)
        assert any(d["reason"] == "budget" for d in before[0][0]["omitted"])  # type: ignore[index]
        for _ in range(3):
            assert kill_connections(postgres_url) >= 1
            assert _assembled(vg) == before


def test_reads_in_a_transaction_read_what_reads_outside_read(postgres_url: str) -> None:
    store = PostgresStore(postgres_url)
    with Vigente(store) as vg:
        vg.runtime.import_events(_events())
        vg.runtime.catch_up_index(C)
        k = parse_instant(AS_OF)
        requests: list[tuple[str, str | None, int | None, int | None]] = [
            ("instruction", None, None, None),
            ("user", "main", None, 1),
        ]

        def reads() -> tuple[object, ...]:
            return (
                store.runtime_contents(C, _digests(store)),
                store.runtime_protected(C, k, requests),
                store.runtime_records(C, kinds=["branch", "participant"], known_at=k),
                store.runtime_records_after(C, 0, 100),
                store.runtime_horizon(C, "main", None, None, k, 2),
            )

        outside = reads()
        with store.transaction():
            inside = [reads() for _ in range(6)]  # past psycopg's threshold for preparing
        assert all(answer == outside for answer in inside)
        assert outside[1][1][1][0].record_id == "u2"  # type: ignore[index]
