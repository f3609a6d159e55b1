"""Real versioned corpora read into lineages: a generic, mapping-driven reader with anomalies.

:mod:`~vigente.corpus.mapping` holds the mapping and the typed records,
:mod:`~vigente.corpus.reader` the streaming reader and its report; each corpus is one mapping
(the first: :mod:`vigente.corpus.legalize_ee`, imported on its own so that
``python -m vigente.corpus.legalize_ee`` runs cleanly).
"""

from __future__ import annotations

from vigente.corpus.mapping import (
    Anomaly,
    AnomalyKind,
    CorpusFileError,
    ExcludedRecord,
    KnowledgeStep,
    SourceMapping,
    VersionRecord,
)
from vigente.corpus.reader import (
    CorpusReader,
    CorpusReport,
    LineageImport,
    map_lineage,
    read_rows,
    scan,
)

__all__ = [
    "Anomaly",
    "AnomalyKind",
    "CorpusFileError",
    "CorpusReader",
    "CorpusReport",
    "ExcludedRecord",
    "KnowledgeStep",
    "LineageImport",
    "SourceMapping",
    "VersionRecord",
    "map_lineage",
    "read_rows",
    "scan",
]
