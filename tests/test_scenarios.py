"""Seed 9.2's scenarios are all data: one fixture each in tests/data/scenarios, each saying what
must reach the model, what must not and why something was left out (the fixtures themselves run
on both backends in tests/conformance/test_assemble.py::test_scenarios)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

SCENARIOS = Path(__file__).resolve().parent / "data" / "scenarios"

#: Seed 003, section 9.2, in its order (the Italian names), and the fixture for each.
SEED_9_2 = {
    "stato del selettore di documenti differito": "deferred_document_picker",
    "file generati": "generated_files",
    "memoria obsoleta delle app collegate": "stale_connected_app",
    "stato del runtime con più skill": "multi_skill_state",
    "visibilità dei partecipanti": "participant_visibility",
    "contraddizione e sostituzione": "contradiction_supersession",
    "correzione della provenienza interrotta": "broken_provenance",
    "reinserimento esatto del CSV grezzo": "exact_csv_rehydration",
    "isolamento dei rami": "branch_isolation",
    "errori cruciali per i nuovi tentativi": "retry_critical_failures",
    "omissione dei dati Google per privacy": "google_privacy",
    "stato di continuazione dei sottoagenti": "subagent_continuation",
    "attribuzione nella discussione autonoma": "debate_attribution",
    "acquisizione degli artefatti dei sottoagenti figli": "subagent_artifact_capture",
    "metadati di ripresa del padre": "parent_resume_metadata",
    "compatibilità delle attività pianificate": "scheduled_task",
    "compatibilità degli invii nei rami": "branch_send",
}


def _expects(name: str) -> list[dict[str, object]]:
    lines = (SCENARIOS / f"{name}.jsonl").read_text("utf-8").splitlines()
    return [e for e in map(json.loads, filter(str.strip, lines)) if e["event"] == "expect"]


def test_the_seed_lists_seventeen_scenarios_and_each_has_its_own_fixture() -> None:
    assert len(SEED_9_2) == 17 and len(set(SEED_9_2.values())) == 17
    missing = [f for f in SEED_9_2.values() if not (SCENARIOS / f"{f}.jsonl").exists()]
    assert missing == []


@pytest.mark.parametrize("name", sorted(SEED_9_2.values()))
def test_a_fixture_says_what_must_and_must_not_reach_the_model_and_why(name: str) -> None:
    expects = _expects(name)
    assert expects, name
    assert any(e.get("must") for e in expects)
    assert any(e.get("must_not") for e in expects)
    assert any(e.get("omitted") for e in expects)
    for e in expects:
        assert e.get("name"), "an expectation is named, so that its failure says which"


def test_every_runtime_mode_has_a_scenario() -> None:
    from vigente.records.runtime import MODES

    modes = {str(e.get("mode", "chat")) for f in SEED_9_2.values() for e in _expects(f)}
    assert modes == set(MODES)
