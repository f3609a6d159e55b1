"""The SQLite backend's numbered migrations: the tables of every contract, applied in order by
the first store that opens a file, in one write transaction, and recorded in
``vigente_migrations``. New migrations go at the end, never in between."""

from __future__ import annotations

from vigente.store.sqlite.assembly import ASSEMBLY_MIGRATIONS
from vigente.store.sqlite.documents import RECORD_MIGRATIONS
from vigente.store.sqlite.horizon import HORIZON_MIGRATIONS, IN_FLIGHT_MIGRATIONS
from vigente.store.sqlite.recall import RECALL_MIGRATIONS, RECALL_NAME_MIGRATIONS
from vigente.store.sqlite.retrieval import FIELD_MIGRATIONS, RETRIEVAL_MIGRATIONS
from vigente.store.sqlite.runtime import (
    CONTENT_TOKEN_MIGRATIONS,
    PURGE_EPOCH_MIGRATIONS,
    RUNTIME_MIGRATIONS,
)

__all__ = ["INTERVAL_INDEXES", "MIGRATIONS", "OPEN_END"]

OPEN_END = 1 << 62  # larger than any instant Python's datetime can represent

MIGRATIONS: list[list[str]] = [
    # 1: the kernel: subjects (lineage within a scope), the write journal, versions, precedence
    [
        """CREATE TABLE subjects (
            subject_id INTEGER PRIMARY KEY,
            lineage    TEXT NOT NULL,
            scope_key  TEXT NOT NULL,
            UNIQUE (lineage, scope_key)
        )""",
        """CREATE TABLE writes (
            write_id   INTEGER PRIMARY KEY AUTOINCREMENT,
            subject_id INTEGER NOT NULL REFERENCES subjects (subject_id),
            op         TEXT NOT NULL CHECK (op IN ('record', 'retract')),
            source     TEXT NOT NULL,
            value      TEXT,
            valid_from INTEGER NOT NULL,
            valid_to   INTEGER NOT NULL,
            known_at   INTEGER NOT NULL,
            date_flags INTEGER NOT NULL
        )""",
        "CREATE INDEX writes_timeline ON writes (subject_id, source, known_at)",
        """CREATE TABLE versions (
            version_id TEXT PRIMARY KEY,
            subject_id INTEGER NOT NULL REFERENCES subjects (subject_id),
            source     TEXT NOT NULL,
            value      TEXT NOT NULL,
            valid_from INTEGER NOT NULL,
            valid_to   INTEGER NOT NULL,
            known_from INTEGER NOT NULL,
            known_to   INTEGER NOT NULL,
            date_flags INTEGER NOT NULL,
            CHECK (valid_to > valid_from),
            CHECK (known_to >= known_from)
        )""",
        "CREATE INDEX versions_valid_from ON versions (subject_id, valid_from)",
        "CREATE INDEX versions_valid_to ON versions (subject_id, valid_to)",
        "CREATE INDEX versions_open ON versions (subject_id, source, known_to)",
        """CREATE TABLE precedence_rules (
            rule_id    TEXT PRIMARY KEY,
            lineage    TEXT NOT NULL,  -- '' = every lineage of the scope
            scope_key  TEXT NOT NULL,
            sources    TEXT NOT NULL,  -- JSON array, highest precedence first
            known_from INTEGER NOT NULL,
            known_to   INTEGER NOT NULL,
            date_flags INTEGER NOT NULL
        )""",
        "CREATE INDEX precedence_subject ON precedence_rules (lineage, scope_key, known_from)",
    ],
]

MIGRATIONS += RECORD_MIGRATIONS
MIGRATIONS += RETRIEVAL_MIGRATIONS

MIGRATIONS += [
    # 4: one interval index that answers a lookup without visiting the table: a subject's rows
    #    by valid_from, carrying both axes (filtered inside the index) and the rest of the row
    #    (the rows found are read where they sit together, not from one table page each). Open
    #    snapshots by validity, so that a write reads only the snapshots its period touches.
    #    The two older interval indexes go: every index is paid for by every write.
    [
        "DROP INDEX IF EXISTS versions_valid_from",
        "DROP INDEX IF EXISTS versions_valid_to",
        "DROP INDEX IF EXISTS versions_open",
        "DROP INDEX IF EXISTS versions_valid",
        """CREATE INDEX versions_valid ON versions (subject_id, valid_from, valid_to, known_from,
            known_to, version_id, source, value, date_flags)""",
        f"""CREATE INDEX versions_open ON versions (subject_id, source, valid_to, valid_from)
            WHERE known_to = {OPEN_END}""",
    ],
]

MIGRATIONS += RUNTIME_MIGRATIONS  # the runtime graph (keep new migrations after this line)
MIGRATIONS += FIELD_MIGRATIONS  # retrieval: titles and references of documents as fields
MIGRATIONS += ASSEMBLY_MIGRATIONS  # recorded context assemblies (vigente.assemble)
MIGRATIONS += HORIZON_MIGRATIONS  # the answered knowledge horizon and recorded backfills
MIGRATIONS += RECALL_MIGRATIONS  # recall over the runtime graph (vigente.runtime.recall)
MIGRATIONS += CONTENT_TOKEN_MIGRATIONS  # token counts of raw results, kept at import (issue 23)
MIGRATIONS += IN_FLIGHT_MIGRATIONS  # writes learned now, reserved before they are dated (issue 35)
MIGRATIONS += PURGE_EPOCH_MIGRATIONS  # the purge epoch each process checks (issue 35)
MIGRATIONS += RECALL_NAME_MIGRATIONS  # recall: who spoke as a field, terms stemmed (issues 36, 42)

# The interval index on both axes of every snapshot (the benchmark's "same SQL without the
# interval indexes" drops it). versions_open serves writes and cannot answer a lookup.
INTERVAL_INDEXES = ("versions_valid",)
