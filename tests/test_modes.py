"""Runtime modes (seed 4.13) on both backends: each mode's contract is recorded, rebuilt the
same, protects what it promises under a tiny budget, and refuses a graph it cannot assemble.
The sessions are the scenario fixtures' event logs (tests/data/scenarios)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from vigente import InvalidInput, Vigente
from vigente.assemble import ContextAssembly

SCENARIOS = Path(__file__).resolve().parent / "data" / "scenarios"


def _load(vg: Vigente, name: str, *, skip: tuple[str, ...] = ()) -> str:
    """Import a fixture's events (not its ``expect`` lines, nor the events named in ``skip``);
    return its conversation id."""
    lines = [
        line
        for line in (SCENARIOS / f"{name}.jsonl").read_text("utf-8").splitlines()
        if line.strip() and json.loads(line)["event"] not in ("expect", *skip)
    ]
    report = vg.runtime.import_events(lines)
    return report.conversations[0]


def _text(a: ContextAssembly) -> str:
    return json.dumps([a.system, a.messages], ensure_ascii=False)


def _decisions(a: ContextAssembly) -> dict[str, dict[str, Any]]:
    return {d["ref"]: d for d in a.record["included"] + a.record["omitted"]}


def test_every_mode_records_its_contract_and_rebuilds_the_same(vg: Vigente) -> None:
    cases = [
        ("debate_attribution", "pro", "debate", "2026-10-13T15:05:00+00:00"),
        ("parent_resume_metadata", "agent", "parent_resume", "2026-10-15T08:11:00+00:00"),
        ("subagent_continuation", "agent", "subagent", "2026-10-12T08:01:00+00:00"),
        ("branch_send", "agent", "branch_send", "2026-10-17T10:08:00+00:00"),
        ("participant_visibility", "claude", "multi_model", "2026-10-08T11:04:30+00:00"),
    ]
    for name, participant, mode, at in cases:
        conversation = _load(vg, name)
        branch = "b2b" if mode == "branch_send" else "main"
        a = vg.assembly.assemble(conversation, branch, participant, mode=mode, as_of=at)
        assert a.record["mode_contract"]["mode"] == mode
        assert a.record["mode_contract"]["contract"] == f"{mode}/1"
        stored = vg.assembly.explain(a.id)
        assert stored["mode_contract"] == a.record["mode_contract"]
        assert vg.assembly.rebuild(a.id)["matches"], (name, vg.assembly.rebuild(a.id))
        # the mode's own rules name themselves
        if mode in ("debate", "parent_resume", "branch_send"):
            assert any(d["rule"].startswith(f"mode.{mode}.") for d in a.record["included"])


def test_scheduled_task_sees_its_state_not_the_chat(vg: Vigente) -> None:
    c = _load(vg, "scheduled_task", skip=("share",))
    at = "2026-10-17T07:02:00+00:00"
    a = vg.assembly.assemble(c, "main", "digest", mode="scheduled", as_of=at)
    text = _text(a)
    assert "manager digest" in text and "last_digest_until" in text
    assert "Pasticceria Rota" not in text and "2310.44" not in text
    d = _decisions(a)
    assert d["u1"]["reason"] == "mode_scope"
    assert d["u1"]["rule"] == "mode.scheduled.chat_history_not_shared"
    assert d["bank"]["reason"] in ("mode_scope", "participant_private")
    assert a.record["omission_counts"]["mode_scope"] >= 3
    why = vg.assembly.why_not(a.id, "a1")
    assert why["reason"] == "mode_scope" and why["rule"] == "mode.scheduled.chat_history_not_shared"
    # the same participant's request in chat mode is not scoped to the task
    chat = vg.assembly.assemble(c, "main", "digest", as_of=at)
    assert "Pasticceria Rota" in _text(chat)
    assert "mode_scope" not in chat.record["omission_counts"]


def test_a_moderator_directive_survives_any_budget_and_reaches_every_debater(
    vg: Vigente,
) -> None:
    c = _load(vg, "debate_attribution")
    at = "2026-10-13T15:05:00+00:00"
    for debater, other in (("pro", "Con"), ("con", "Pro")):
        a = vg.assembly.assemble(c, "main", debater, mode="debate", budget=1, as_of=at)
        text = _text(a)
        assert "moderator directive to every debater]: Round 2" in text
        assert "moderator directive to every debater]: Round 1" in text
        assert f"[{other}]:" in text
        assert "PRIVATE" not in text.replace(f"{debater.upper()}-PRIVATE", "")
        assert _decisions(a)["d2"]["rule"] == "mode.debate.moderator_directive:mod"
    # in chat mode the same directive is an ordinary labelled turn: a budget may drop it
    chat = vg.assembly.assemble(c, "main", "pro", budget=1, as_of=at)
    assert _decisions(chat)["d1"].get("reason") == "budget"


def test_moderators_come_from_the_policy(vg: Vigente) -> None:
    from vigente.assemble import policy_from_document

    c = _load(vg, "debate_attribution")
    pol = policy_from_document({"id": "no-moderator", "version": 1, "modes": {"moderators": []}})
    a = vg.assembly.assemble(
        c, "main", "pro", mode="debate", policy=pol, as_of="2026-10-13T15:05:00+00:00"
    )
    assert a.record["mode_contract"]["moderators"] == []
    assert "moderator directive" not in _text(a)
    assert "[Moderator]: Round 2" in _text(a)
    with pytest.raises(InvalidInput, match="modes.moderators"):
        policy_from_document({"id": "bad", "version": 1, "modes": {"moderators": [1]}})


def test_parent_resume_takes_its_own_checkpoint_and_promotions_only(vg: Vigente) -> None:
    c = _load(vg, "parent_resume_metadata")
    a = vg.assembly.assemble(
        c, "main", "agent", mode="parent_resume", budget=1, as_of="2026-10-15T08:11:00+00:00"
    )
    contract = a.record["mode_contract"]
    assert contract["resumed_run"] == "r1" and contract["checkpoint"] == "ck-resume"
    d = _decisions(a)
    assert d["ck-resume"]["as"] == "checkpoint"
    assert d["ck-early"]["reason"] == "superseded"
    assert d["tr"]["reason"] == "not_promoted"
    assert {d[r]["as"] for r in ("trep", "csv", "ht")} == {"message", "tool_exchange", "recovery"}
    text = _text(a)
    assert "TRAINS-WORKSPACE" not in text
    # a promoted result goes as labelled data, never as a call the parent made
    calls = [c for m in a.messages for c in m.get("tool_calls") or []]
    assert not any(call["id"] in ("csv", "ht") for call in calls)


def test_branch_send_keeps_the_source_runs_state_on_its_branch(vg: Vigente) -> None:
    c = _load(vg, "branch_send")
    at = "2026-10-17T10:08:00+00:00"
    a = vg.assembly.assemble(c, "b2b", "agent", mode="branch_send", budget=1, as_of=at)
    d = _decisions(a)
    assert d["a1"]["as"] == "message"  # the sent message is protected
    assert d["a1"]["rule"] == "mode.branch_send.sent_from:main"
    assert d["sim"]["reason"] == "mode_scope"
    assert d["sk-main"]["reason"] == "mode_scope"
    # a chat request on the same fork resumes the inherited pending job
    chat = vg.assembly.assemble(c, "b2b", "agent", as_of=at)
    assert _decisions(chat)["sim"]["as"] == "recovery"


def test_a_mode_without_what_it_assembles_is_refused(vg: Vigente) -> None:
    c = _load(vg, "participant_visibility")
    at = "2026-10-08T11:06:00+00:00"
    for mode, words in (
        ("scheduled", "no run of mode scheduled"),
        ("parent_resume", "no run with subagent children"),
        ("subagent", "no subagent run"),
        ("branch_send", "was not forked after a message"),
    ):
        with pytest.raises(InvalidInput, match=words):
            vg.assembly.assemble(c, "main", "agent", mode=mode, as_of=at)
    assert vg.store.runtime_assembly_ids(c) == []  # nothing recorded for a refused request


def test_cli_assemble_prints_the_mode_contract(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from vigente.cli import cli

    db = str(tmp_path / "m.db")
    lines = [
        line
        for line in (SCENARIOS / "debate_attribution.jsonl").read_text("utf-8").splitlines()
        if json.loads(line)["event"] != "expect"
    ]
    log = tmp_path / "debate.jsonl"
    log.write_text("\n".join(lines) + "\n")
    runner = CliRunner()
    assert runner.invoke(cli, ["--db", db, "runtime", "import", str(log)]).exit_code == 0
    base = ["--db", db, "assemble", "--conversation", "debate-11", "--branch", "main"]
    out = runner.invoke(cli, [*base, "--participant", "con", "--mode", "debate", "--json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    assert data["mode_contract"]["contract"] == "debate/1"
    bad = runner.invoke(cli, [*base, "--participant", "con", "--mode", "scheduled", "--json"])
    assert bad.exit_code == 1 and bad.output.startswith("Error: mode scheduled")
