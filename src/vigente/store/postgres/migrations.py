"""The PostgreSQL backend's numbered migrations: the tables of every contract, applied in order
by the first store that opens a database, under an advisory lock, and recorded in
``vigente_migrations``. New migrations go at the end, never in between (docs/deployment.md)."""

from __future__ import annotations

from typing import Any

import psycopg

from vigente.store.postgres.assembly import ASSEMBLY_MIGRATIONS
from vigente.store.postgres.documents import RECORD_MIGRATIONS
from vigente.store.postgres.horizon import HORIZON_MIGRATIONS, IN_FLIGHT_MIGRATIONS
from vigente.store.postgres.recall import RECALL_MIGRATIONS, RECALL_NAME_MIGRATIONS
from vigente.store.postgres.retrieval import (
    FIELD_MIGRATIONS,
    RETRIEVAL_MIGRATIONS,
)
from vigente.store.postgres.runtime import (
    CONTENT_TOKEN_MIGRATIONS,
    PURGE_EPOCH_MIGRATIONS,
    RUNTIME_MIGRATIONS,
)

__all__ = ["MIGRATIONS", "MIGRATION_LOCK_KEY", "schema_version"]


#: Advisory lock key that serialises the migrations of one database ("vigente" in ASCII).
MIGRATION_LOCK_KEY = 0x76_69_67_65_6E_74_65
MIGRATIONS: list[list[str]] = [
    # 1: the kernel: subjects (lineage within a scope), the write journal, versions, precedence
    [
        "CREATE EXTENSION IF NOT EXISTS btree_gist",
        """CREATE TABLE subjects (
            subject_id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            lineage    text COLLATE "C" NOT NULL,
            scope_key  text COLLATE "C" NOT NULL,
            UNIQUE (lineage, scope_key)
        )""",
        """CREATE TABLE writes (
            write_id   bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            subject_id bigint NOT NULL REFERENCES subjects (subject_id),
            op         text NOT NULL CHECK (op IN ('record', 'retract')),
            source     text COLLATE "C" NOT NULL,
            value      text,
            valid      tstzrange NOT NULL CHECK (NOT isempty(valid) AND NOT lower_inf(valid)),
            known_at   timestamptz NOT NULL,
            date_flags smallint NOT NULL
        )""",
        "CREATE INDEX writes_timeline ON writes (subject_id, source, known_at)",
        """CREATE TABLE versions (
            seq        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,  -- insertion order
            version_id text COLLATE "C" NOT NULL UNIQUE,
            subject_id bigint NOT NULL REFERENCES subjects (subject_id),
            source     text COLLATE "C" NOT NULL,
            value      text NOT NULL,
            valid      tstzrange NOT NULL CHECK (NOT isempty(valid) AND NOT lower_inf(valid)),
            known_from timestamptz NOT NULL,
            known_to   timestamptz CHECK (known_to >= known_from),  -- NULL: still held
            known      tstzrange NOT NULL
                       GENERATED ALWAYS AS (tstzrange(known_from, known_to, '[)')) STORED,
            date_flags smallint NOT NULL
        )""",
        "CREATE INDEX versions_valid ON versions USING gist (subject_id, valid)",
        "CREATE INDEX versions_known ON versions USING gist (subject_id, known)",
        "CREATE INDEX versions_order ON versions (subject_id, seq)",
        "CREATE INDEX versions_open ON versions (subject_id, source, seq) WHERE known_to IS NULL",
        """CREATE TABLE precedence_rules (
            seq        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            rule_id    text COLLATE "C" NOT NULL UNIQUE,
            lineage    text COLLATE "C" NOT NULL,  -- '' = every lineage of the scope
            scope_key  text COLLATE "C" NOT NULL,
            sources    text NOT NULL,  -- JSON array, highest precedence first
            known_from timestamptz NOT NULL,
            known_to   timestamptz CHECK (known_to >= known_from),
            known      tstzrange NOT NULL
                       GENERATED ALWAYS AS (tstzrange(known_from, known_to, '[)')) STORED,
            date_flags smallint NOT NULL
        )""",
        "CREATE INDEX precedence_subject ON precedence_rules (lineage, scope_key, seq)",
    ],
]

MIGRATIONS += RECORD_MIGRATIONS
MIGRATIONS += RETRIEVAL_MIGRATIONS
MIGRATIONS += RUNTIME_MIGRATIONS  # the runtime graph (keep new migrations after this line)
MIGRATIONS += FIELD_MIGRATIONS  # retrieval: titles and references of documents as fields
MIGRATIONS += ASSEMBLY_MIGRATIONS  # recorded context assemblies (vigente.assemble)
MIGRATIONS += HORIZON_MIGRATIONS  # the answered knowledge horizon and recorded backfills
MIGRATIONS += RECALL_MIGRATIONS  # recall over the runtime graph (vigente.runtime.recall)
MIGRATIONS += CONTENT_TOKEN_MIGRATIONS  # token counts of raw results, kept at import (issue 23)
MIGRATIONS += IN_FLIGHT_MIGRATIONS  # writes learned now, reserved before they are dated (issue 35)
MIGRATIONS += PURGE_EPOCH_MIGRATIONS  # the purge epoch each process checks (issue 35)
MIGRATIONS += RECALL_NAME_MIGRATIONS  # recall: who spoke as a field, terms stemmed (issues 36, 42)

SELECT_SCHEMA_TABLE = "SELECT to_regclass('vigente_migrations')"
CREATE_SCHEMA_TABLE = "CREATE TABLE IF NOT EXISTS vigente_migrations (version integer PRIMARY KEY)"
SELECT_SCHEMA_VERSION = "SELECT coalesce(max(version), 0) FROM vigente_migrations"
INSERT_SCHEMA_VERSION = "INSERT INTO vigente_migrations (version) VALUES (%s)"


def schema_version(conn: psycopg.Connection[Any]) -> int:
    """The number of migrations applied (0 for an empty database)."""
    row = conn.execute(SELECT_SCHEMA_TABLE).fetchone()
    if row is None or row[0] is None:
        return 0
    row = conn.execute(SELECT_SCHEMA_VERSION).fetchone()
    return 0 if row is None else int(row[0])
