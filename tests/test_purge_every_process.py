"""A purge reaches every process on the store (issue 35): process B reads a conversation (its
decoded rows, typed nodes and rendered texts now hold the account's text), process A purges
the account, and at B's next read of the store B holds none of it, on SQLite and PostgreSQL.
B is a real second process; what it holds is found by walking every live object (no cache is
named), so a cache added later is covered too."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from vigente import Vigente

ROOT = Path(__file__).resolve().parent.parent
SECRET = "Zanzibar-ledger-7731"

# Process B: read the conversation, say what it holds, wait for A's purge, read another
# conversation, say what it holds then.
READER = textwrap.dedent('''
    import gc, json, sys
    from vigente import Vigente

    def holding(marker):
        """Whether any live object refers to a string holding ``marker`` (bytes, so that
        the marker itself is no such string)."""
        gc.collect()
        for obj in gc.get_objects():
            for ref in gc.get_referents(obj):
                if isinstance(ref, str) and marker.decode() in ref:
                    return True
        return False

    url, conversation, other = sys.argv[1:4]
    marker = bytes.fromhex(sys.argv[4])
    vg = Vigente.open(url)
    vg.assembly.assemble(conversation, "main", "agent", persist=False)
    vg.runtime.transcript(conversation, "main")
    before = holding(marker)
    print(json.dumps({"before": before}), flush=True)
    sys.stdin.readline()  # A has purged
    vg.runtime.transcript(other, "main")
    print(json.dumps({"after": holding(marker)}), flush=True)
    vg.close()
''')


def _events(conversation: str, account: str, text: str) -> list[str]:
    at = "2026-10-05T08:00:00+00:00"
    events = [
        {"event": "conversation", "id": conversation, "account": account, "at": at},
        {"event": "participant", "id": "agent", "model": "m"},
        {"event": "branch", "id": "main"},
        {"event": "message", "id": "m1", "branch": "main", "role": "user", "content": text},
        {"event": "run", "id": "r1", "branch": "main", "participant": "agent", "mode": "chat"},
        {"event": "tool_call", "id": "t1", "run": "r1", "name": "ledger", "arguments": {}},
        {"event": "tool_result", "call": "t1", "status": "succeeded",
         "content": {"account": text, "balance": 10}},
    ]
    return [json.dumps(e if e["event"] == "conversation" else dict(e, conversation=conversation))
            for e in events]


def test_a_purge_in_one_process_empties_the_caches_of_another(store_url: str) -> None:
    with Vigente.open(store_url) as vg:
        vg.runtime.import_events(_events("doomed", "acct-gone", f"my code is {SECRET}"))
        vg.runtime.import_events(_events("kept", "acct-kept", "nothing to see"))
        env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
        reader = subprocess.Popen(
            [sys.executable, "-c", READER, store_url, "doomed", "kept", SECRET.encode().hex()],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
        try:
            assert reader.stdout is not None and reader.stdin is not None
            assert json.loads(reader.stdout.readline()) == {"before": True}  # B caches it
            report = vg.runtime.purge_account("acct-gone")
            assert report.complete
            reader.stdin.write("purged\n")
            reader.stdin.flush()
            assert json.loads(reader.stdout.readline()) == {"after": False}
        finally:
            reader.kill()
            reader.communicate(timeout=30)
