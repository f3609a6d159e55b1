"""``python -m vigente.bench context`` on real tau-bench sessions: every figure is there, the
baselines get vigente's serializer (the same call ids, compact JSON), required facts are only
those a request can be judged on, and the prompt-cache bills follow each provider's rules
(the baselines are LangChain's own: those tests skip without the ``bench`` extra)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from rich.console import Console

from tests.conftest import SHARED_DATA, shared_file
from vigente.bench._prompt_cache import (
    ANTHROPIC_SONNET,
    OPENAI_GPT4O,
    AnthropicCache,
    OpenAICache,
)
from vigente.bench.context import (
    baseline_request,
    call_keys,
    holds,
    split_facts,
)

TAU = SHARED_DATA / "tau-bench" / "airline.trials01.json.xz"


def test_context_benchmark_on_two_sessions() -> None:
    pytest.importorskip("langchain")
    from vigente.bench.context import ID_MODES, METHODS, run_tau

    figures = run_tau(shared_file(TAU), 2, Console(quiet=True))
    assert figures["tau_trials"] == [0] and figures["tau_fitted"] is True
    for mode in ID_MODES:
        p = f"tau_{mode}_"
        assert figures[p + "points"] > 0 and figures[p + "required_facts"] > 0
        assert figures[p + "availability_replay"] == 1.0
        for name in METHODS:
            assert 0 <= figures[f"{p}availability_{name}"] <= 1
            assert figures[f"{p}availability_{name}"] <= figures[f"{p}availability_anywhere_{name}"]
            assert figures[f"{p}history_tokens_{name}"] > 0
            for provider in ("openai", "anthropic"):
                assert figures[f"{p}cost_{provider}_{name}"] > 0
        # masking clears old tool results: never more history than replay
        assert figures[p + "history_tokens_masking"] <= figures[p + "history_tokens_replay"]
        # replay only appends; masking rewrites an earlier result at nearly every call
        assert figures[p + "rewrites_replay"] == figures[p + "rewritten_tokens_replay"] == 0
        assert figures[p + "rewrite_at_median_replay"] is None
        assert figures[p + "rewrites_masking"] > 0 and figures[p + "rewritten_tokens_masking"] > 0
        assert figures[p + "rewrite_at_median_masking"] > 0
    # vigente is the same request in "short" and "published"; the baselines there get its
    # short ids and compact JSON, so they send fewer tokens than the transcript as recorded
    assert (
        figures["tau_short_tokens_per_call_vigente"]
        == (figures["tau_published_tokens_per_call_vigente"])
    )
    for name in ("replay", "masking"):
        assert (
            figures[f"tau_short_tokens_per_call_{name}"]
            < figures[f"tau_original_tokens_per_call_{name}"]
            < figures[f"tau_published_tokens_per_call_{name}"]
        )


def test_the_cache_stable_policy_never_rewrites_a_request() -> None:
    pytest.importorskip("langchain")
    from vigente.assemble import load_policy
    from vigente.bench.context import run_tau

    default = run_tau(shared_file(TAU), 3, Console(quiet=True))
    stable = run_tau(shared_file(TAU), 3, Console(quiet=True), load_policy("cache-stable"))
    # the default supersedes an earlier reading in place (the request changes there)
    assert default["tau_short_rewrites_vigente"] > 0
    assert stable["tau_short_rewrites_vigente"] == stable["tau_short_rewritten_tokens_vigente"] == 0
    assert stable["tau_short_availability_vigente"] == 1.0
    assert stable["tau_short_cost_anthropic_vigente"] < default["tau_short_cost_anthropic_vigente"]


def test_trials_select_sessions() -> None:
    pytest.importorskip("langchain")
    from vigente.bench.context import run_tau

    figures = run_tau(shared_file(TAU), 1, Console(quiet=True), trials=(1,))
    assert figures["tau_trials"] == [1] and figures["tau_sessions"] == 1
    assert figures["tau_trial1_short_model_calls"] == figures["tau_short_model_calls"] > 0


def _call(cid: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
    function = {"name": name, "arguments": json.dumps(args)}
    return {"role": "assistant", "content": None, "tool_calls": [{"id": cid, "function": function}]}


def _session() -> list[dict[str, Any]]:
    long_id = "call_" + "x" * 24
    return [
        {"role": "system", "content": "Each extra bag costs 150 dollars. Airline policy."},
        {"role": "user", "content": "I am mia_li_3668, reservation ABC123; 150 for a bag?"},
        _call(long_id, "get_reservation_details", {"reservation_id": "ABC123"}),
        {
            "role": "tool",
            "tool_call_id": long_id,
            "content": json.dumps({"price": 12503, "payment_id": "credit_card_44", "bags": 1}),
        },
        _call(long_id, "get_user_details", {"user_id": "mia_li_3668"}),
        {
            "role": "tool",
            "tool_call_id": long_id,
            "content": json.dumps({"certificate": "certificate_7504069", "amount": 250}),
        },
    ]


def test_facts_told_apart() -> None:
    """Values shorter than 3 characters and values in the system text are set apart; a
    number is found only as a whole word (250 is not in 12503); a value is tied to the calls
    and text it was seen in."""
    before = _session()
    keys = call_keys(before)
    assert keys[2] == ["call_" + "x" * 24] and keys[4] == ["call_" + "x" * 24 + "#2"]
    action = {
        "name": "update_reservation_baggages",
        "kwargs": {
            "reservation_id": "ABC123",
            "total_baggages": 1,
            "payment_id": "certificate_7504069",
            "amount": 250,
            "price": 150,
            "unseen": "never_said",
        },
    }
    facts = split_facts(before, keys, [action])
    assert facts.short == ["1"] and facts.in_system == ["150"]
    by_value = {f.value: f for f in facts.counted}
    assert set(by_value) == {"ABC123", "certificate_7504069", "250"}
    assert by_value["ABC123"].sources == {None, keys[2][0]}
    assert by_value["250"].sources == {keys[4][0]}
    # 250 reaches the request only as part of 12503 and in another call's result: not held
    other = [
        {"role": "tool", "tool_call_id": keys[2][0], "content": '{"amount":250,"price":12503}'},
    ]
    fact = by_value["250"]
    assert not holds(other, fact, lambda w: {w}, tied=True)
    assert holds(other, fact, lambda w: {w}, tied=False)
    assert not holds([{"role": "user", "content": "price 12503"}], fact, lambda w: {w}, tied=False)
    own = [{"role": "tool", "tool_call_id": keys[4][0], "content": '{"amount":250}'}]
    assert holds(own, fact, lambda w: {w}, tied=True)


def test_baselines_get_the_same_ids_and_compact_json() -> None:
    before = _session()
    keys = call_keys(before)
    wire = {keys[2][0]: "c7", keys[4][0]: "c11"}
    sent = baseline_request(before, keys, lambda k: wire[k])
    assert [m.get("tool_call_id") for m in sent if m["role"] == "tool"] == ["c7", "c11"]
    assert [m["tool_calls"][0]["id"] for m in sent if m.get("tool_calls")] == ["c7", "c11"]
    assert sent[5]["content"] == '{"certificate":"certificate_7504069","amount":250}'
    assert sent[1] == before[1] and before[5]["content"].startswith('{"certificate": ')
    assert baseline_request(before, keys, None) is before


def test_openai_bill_minimum_and_128_token_steps() -> None:
    cache = OpenAICache(OPENAI_GPT4O)
    first = [list(range(1000))]
    assert cache.bill(first) == 1000  # nothing cached yet
    # 1,000 shared tokens: under the 1,024-token minimum, nothing is read
    assert cache.bill([list(range(1000)), [7] * 100]) == 1100
    grown = [list(range(1000)), [7] * 100, [8] * 300]
    # shares 1,100 with the previous request: 1,024 cached (the next step is 1,152)
    assert cache.bill(grown) == pytest.approx(0.5 * 1024 + (1400 - 1024))
    changed = [[5] + list(range(1, 1000)), [7] * 100, [8] * 300]
    assert cache.bill(changed) == 1400  # the first token differs: no prefix to reuse


def test_anthropic_bill_writes_reads_and_lookback() -> None:
    cache = AnthropicCache(ANTHROPIC_SONNET)
    assert cache.bill([[1] * 500]) == 500  # under 1,024 tokens: not cached, base price
    start = [[1] * 1200]
    assert cache.bill(start) == pytest.approx(1.25 * 1200)  # written
    grown = [*start, [2] * 100]
    assert cache.bill(grown) == pytest.approx(0.1 * 1200 + 1.25 * 100)
    # a block before the end changed: only the first entry is a prefix of it
    edited = [*start, [3] * 100, [4] * 10]
    assert cache.bill(edited) == pytest.approx(0.1 * 1200 + 1.25 * 110)
    # more than 20 blocks after the latest entry: the lookback does not reach it
    far = [*edited, *([[9]] * 21)]
    assert cache.bill(far) == pytest.approx(1.25 * (1310 + 21))


def test_anthropic_breakpoint_after_the_system_text() -> None:
    """A change right after the system text still reads the system text's entry."""
    cache = AnthropicCache(ANTHROPIC_SONNET)
    system = [1] * 1100
    assert cache.bill([system, [2] * 50], stable=1) == pytest.approx(1.25 * 1150)
    assert cache.bill([system, [3] * 50], stable=1) == pytest.approx(0.1 * 1100 + 1.25 * 50)
    # without that breakpoint the whole request is written again
    plain = AnthropicCache(ANTHROPIC_SONNET)
    plain.bill([system, [2] * 50])
    assert plain.bill([system, [3] * 50]) == pytest.approx(1.25 * 1150)
