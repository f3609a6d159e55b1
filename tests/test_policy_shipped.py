"""Shipped policies (``vigente/assemble/policies``): read by name wherever a policy file is
(``load_policy``, ``--policy``, ``vigente policy show|check``), and what ``cache-stable`` is for:
a request that only ever grows, so a provider's prompt cache keeps serving what was sent."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from vigente.api import Vigente
from vigente.assemble import default_policy, load_policy, shipped_policies
from vigente.cli import cli
from vigente.errors import InvalidInput
from vigente.runtime.openai import event_lines, transcript_events


def test_a_shipped_policy_is_read_by_name() -> None:
    assert "cache-stable" in shipped_policies()
    pol = load_policy("cache-stable")
    assert (pol.id, pol.version) == ("vigente-cache-stable", 1)
    # the default policy but for one setting
    mine, default = pol.document, default_policy().document
    assert mine["supersession"] == {"newer_reading": "off"}
    for doc in (mine, default):
        del doc["id"], doc["version"], doc["supersession"]
    assert mine == default


def test_a_file_of_that_name_comes_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "cache-stable").write_text('id = "mine"\nversion = 7\n')
    assert load_policy("cache-stable").id == "mine"


def test_an_unknown_name_lists_the_shipped_ones(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="not found.*cache-stable"):
        load_policy(tmp_path / "no-such-policy")


def test_policy_show_and_check_by_name() -> None:
    runner = CliRunner()
    shown = runner.invoke(cli, ["policy", "show", "cache-stable", "--json"])
    assert shown.exit_code == 0, shown.output
    data = json.loads(shown.output)
    assert data["id"] == "vigente-cache-stable"
    assert data["document"]["supersession"]["newer_reading"] == "off"
    checked = runner.invoke(cli, ["policy", "check", "cache-stable"])
    assert checked.exit_code == 0 and "vigente-cache-stable version 1" in checked.output


def _reservation(status: str) -> str:
    flights = [
        {"flight_number": f"HAT{n:03d}", "date": "2024-05-2" + str(n % 9), "price": 100 + n}
        for n in range(6)
    ]
    return json.dumps(
        {"reservation_id": "ZFA04Y", "user_id": "mia_li_3668", "status": status,
         "cabin": "economy", "flights": flights, "payment": "credit_card_4421486"}
    )


def _call(n: int, name: str) -> dict[str, Any]:
    args = json.dumps({"reservation_id": "ZFA04Y"})
    return {"role": "assistant", "content": None, "tool_calls": [
        {"id": f"call_{n}", "type": "function", "function": {"name": name, "arguments": args}}
    ]}


#: A reservation read, then changed (the change's result is a later reading of the same
#: reservation: it supersedes the first under the default policy).
TRANSCRIPT: list[dict[str, Any]] = [
    {"role": "system", "content": "You are an airline agent."},
    {"role": "user", "content": "Cancel my reservation ZFA04Y, please."},
    _call(1, "get_reservation_details"),
    {"role": "tool", "tool_call_id": "call_1", "content": _reservation("active")},
    _call(2, "cancel_reservation"),
    {"role": "tool", "tool_call_id": "call_2", "content": _reservation("cancelled")},
]


def _requests(policy: Any) -> list[list[dict[str, Any]]]:
    out = []
    for upto in (4, 6):  # the model call after each result
        with Vigente.open(":memory:") as vg:
            vg.runtime.import_events(
                event_lines(transcript_events(TRANSCRIPT[:upto], "conv", "main"))
            )
            a = vg.assembly.assemble("conv", "main", "assistant", policy=policy, persist=False)
            out.append(a.messages)
    return out


def test_cache_stable_requests_only_grow() -> None:
    first, second = _requests(default_policy())
    # the default: the earlier reading goes as a marker once the later one is recorded, so the
    # second request rewrites the first one's last result (a prompt cache misses from there)
    assert second[: len(first) - 1] == first[:-1] and second[len(first) - 1] != first[-1]
    assert "superseded" in str(second[len(first) - 1]["content"])
    first, second = _requests(load_policy("cache-stable"))
    # cache-stable: the second request is the first one and more
    assert second[: len(first)] == first and len(second) > len(first)
    assert "ZFA04Y" in str(first[-1]["content"])
