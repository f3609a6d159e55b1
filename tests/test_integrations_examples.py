"""Every example in ``examples/`` runs offline to the end and shows what it says it shows."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def run(name: str, needs: str, tmp_path: Path) -> str:
    if importlib.util.find_spec(needs) is None:
        pytest.skip(f"{needs} is not installed (the integrations extra)")
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / name), str(tmp_path / "ex.db")],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_langchain_agent(tmp_path: Path) -> None:
    out = run("langchain_agent.py", "langchain", tmp_path)
    assert "answer: Reservation ZFA04Y is cancelled." in out
    assert "model call 4: 8 messages" in out
    # the cancellation restates reservation_id only: the flights of the reading stay
    assert ("included memory call_1#memory as memory (supersession.same_entity:"
            "reservation_id=ZFA04Y.restated_in_part:by:call_2)") in out
    assert "raw result of call_1 kept: 7077 bytes" in out


def test_langgraph_agent(tmp_path: Path) -> None:
    out = run("langgraph_agent.py", "langgraph", tmp_path)
    assert "fork: HAT66 flies JFK to SEA. on branch main~2" in out
    assert "never saw c1: other_branch" in out
    assert "fork transcript: ['Flights JFK to SEA?', 'HAT66 flies JFK to SEA.']" in out


def test_openai_agents_session(tmp_path: Path) -> None:
    out = run("openai_agents_session.py", "agents", tmp_path)
    assert "answer: Your card on file ends in 0000." in out
    assert "model inputs: [1, 3, 5] items per call" in out
    assert "the session goes on on branch main~2" in out


def test_retriever_rag(tmp_path: Path) -> None:
    out = run("retriever_rag.py", "langchain_core", tmp_path)
    assert "[2024-01-10] Banks must verify a customer's identity within 30 days." in out
    assert "(superseded by Circular 12/2025)" in out
    assert "replacing Circular 7/2023" in out
