"""The base install works without numpy or any extra (issue 36): recall by words and an
over-budget assembly answer on the CLI (both backends) and over HTTP (SQLite), and a semantic
recall says it needs the ``embed`` extra. Each runs in a subprocess where numpy cannot be
imported (a ``sitecustomize`` on ``PYTHONPATH`` puts a finder that refuses it first on
``sys.meta_path``, before anything else is imported; ``None`` in ``sys.modules`` would not do,
as psycopg takes a ``numpy`` key there for numpy loaded), so the virtualenv's numpy is never
reached."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

import vigente

SRC = Path(vigente.__file__).resolve().parents[1]
CLI = [sys.executable, "-c", "import sys; from vigente.cli import main; sys.exit(main())"]
C = "chat"
ADMIN_KEY = "base-install-admin-key-0123456789abcdef"


def _events() -> list[dict[str, Any]]:
    """A dialogue far longer than a small budget: the one turn about Lisbon is its 6th."""
    events: list[dict[str, Any]] = [
        {"event": "conversation", "id": C, "account": "acct", "at": "2026-01-05T09:00:00+00:00"},
        {"event": "participant", "id": "assistant", "model": "m", "conversation": C},
        {"event": "branch", "id": "main", "conversation": C},
    ]
    for i in range(120):
        text = ("My sister Ana moved to Lisbon last spring and takes the tram to work."
                if i == 5 else f"Turn {i}: the weather, the groceries and the weekend plans.")
        events.append({"event": "message", "id": f"m{i}", "branch": "main",
                       "role": "user" if i % 2 == 0 else "assistant", "content": text,
                       "conversation": C,
                       "at": f"2026-01-05T{10 + i // 60:02d}:{i % 60:02d}:00+00:00"})
    return events


_NO_NUMPY = """\
import sys


class NoNumpy:
    \"\"\"Refuses numpy, as an install without it would.\"\"\"

    def find_spec(self, name, path=None, target=None):
        if name == "numpy" or name.startswith("numpy."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, NoNumpy())
"""


@pytest.fixture(scope="module")
def without_numpy(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The environment of a process where ``import numpy`` fails, running this tree's vigente."""
    shim = tmp_path_factory.mktemp("no-numpy")
    (shim / "sitecustomize.py").write_text(_NO_NUMPY)
    env = {k: v for k, v in os.environ.items() if not k.startswith("VIGENTE_")}
    env["PYTHONPATH"] = os.pathsep.join([str(shim), str(SRC)])
    return env


def _cli(env: dict[str, str], db: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, "--db", db, *args], env=env, capture_output=True, text=True,
                          timeout=300)


@pytest.fixture
def dialogue(store_url: str, without_numpy: dict[str, str], tmp_path: Path) -> str:
    """``store_url`` holding the dialogue, imported by the CLI without numpy."""
    log = tmp_path / "events.jsonl"
    log.write_text("".join(json.dumps(e) + "\n" for e in _events()))
    done = _cli(without_numpy, store_url, "runtime", "import", str(log))
    assert done.returncode == 0, done.stderr
    return store_url


def test_the_base_install_imports_without_numpy(without_numpy: dict[str, str]) -> None:
    check = ("import sys, vigente, vigente.cli, vigente.http, vigente.assemble, "
             "vigente.runtime.recall, vigente.retrieval\n"
             "from vigente.retrieval import embedding_available\n"
             "assert 'numpy' not in sys.modules\n"
             "assert not embedding_available()\n")
    done = subprocess.run([sys.executable, "-c", check], env=without_numpy, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr


def test_the_base_dependencies_do_not_include_numpy() -> None:
    import tomllib

    project = tomllib.loads((SRC.parent / "pyproject.toml").read_text())["project"]
    assert not [d for d in project["dependencies"] if d.lower().startswith("numpy")]


def test_semantic_recall_says_it_needs_the_extra(dialogue: str,
                                                without_numpy: dict[str, str]) -> None:
    done = _cli(without_numpy, dialogue, "recall", "where does Ana live", "--conversation", C,
                "--mode", "semantic")
    assert done.returncode == 1, done.stderr
    assert done.stderr.startswith("Error: ") and "pip install 'vigente[embed]'" in done.stderr
    assert "Traceback" not in done.stderr


def test_an_assembly_within_budget_needs_no_numpy(dialogue: str,
                                                 without_numpy: dict[str, str]) -> None:
    done = _cli(without_numpy, dialogue, "assemble", "--conversation", C, "--branch", "main",
                "--participant", "assistant", "--budget", "100000", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["recall"] is None


@pytest.mark.parametrize("mode", ["lexical", "auto"])
def test_recall_by_words_without_numpy(dialogue: str, without_numpy: dict[str, str],
                                       mode: str) -> None:
    done = _cli(without_numpy, dialogue, "recall", "where does Ana live now",
                "--conversation", C, "--mode", mode, "--json")
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert found["mode"] == "lexical" and found["hits"][0]["ref"] == "m5"


def test_an_over_budget_assembly_recalls_without_numpy(dialogue: str,
                                                      without_numpy: dict[str, str]) -> None:
    done = _cli(without_numpy, dialogue, "assemble", "--conversation", C, "--branch", "main",
                "--participant", "assistant", "--budget", "400", "--query",
                "where does Ana live now", "--json")
    assert done.returncode == 0, done.stderr
    record = json.loads(done.stdout)
    assert {"ref": "m5", "kind": "message", "as": "recalled"}.items() <= next(
        d for d in record["included"] if d["ref"] == "m5").items()


# -- over HTTP (SQLite) ----------------------------------------------------------------------

@pytest.fixture
def server(without_numpy: dict[str, str], tmp_path: Path) -> Iterator[tuple[httpx.Client,
                                                                            dict[str, str]]]:
    """``vigente serve`` without numpy, with one tenant holding the dialogue: a client and the
    tenant's key."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**without_numpy, "VIGENTE_ADMIN_KEY": ADMIN_KEY}
    log = tmp_path / "serve.log"
    with log.open("w") as out:
        proc = subprocess.Popen([*CLI, "serve", "--db", str(tmp_path / "data"), "--port",
                                 str(port), "--no-access-log", "--rate", "1000", "--burst",
                                 "1000"], env=env, stdout=out, stderr=subprocess.STDOUT)
    admin = {"Authorization": f"Bearer {ADMIN_KEY}"}
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=120) as c:
            deadline = time.monotonic() + 120
            while True:
                try:
                    if c.get("/v1/health").status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"the server did not start: {log.read_text()}")
                time.sleep(0.1)
            assert c.post("/v1/admin/tenants", json={"name": "acme"},
                          headers=admin).status_code == 201
            made = c.post("/v1/admin/tenants/acme/keys", json={"role": "service"}, headers=admin)
            assert made.status_code == 201, made.text
            key = {"Authorization": f"Bearer {made.json()['key']}"}
            r = c.post("/v1/runtime/events", json={"events": _events()}, headers=key)
            assert r.status_code == 200, r.text
            yield c, key
    finally:
        proc.terminate()
        proc.wait(30)


def test_http_without_numpy_says_semantic_needs_the_extra(
        server: tuple[httpx.Client, dict[str, str]]) -> None:
    c, key = server
    r = c.post("/v1/recall", json={"query": "where does Ana live", "conversation": C,
                                   "mode": "semantic"}, headers=key)
    assert r.status_code == 400, r.text
    assert r.json()["error"]["code"] == "embedding_unavailable"
    assert "pip install 'vigente[embed]'" in r.json()["error"]["message"]
    fits = c.post("/v1/assemble", json={"conversation": C, "branch": "main",
                                        "participant": "assistant", "budget": 100000},
                  headers=key)
    assert fits.status_code == 200, fits.text


def test_http_recall_and_over_budget_assembly_without_numpy(
        server: tuple[httpx.Client, dict[str, str]]) -> None:
    c, key = server
    r = c.post("/v1/recall", json={"query": "where does Ana live now", "conversation": C,
                                   "mode": "lexical"}, headers=key)
    assert r.status_code == 200, r.text
    assert r.json()["hits"][0]["ref"] == "m5"
    a = c.post("/v1/assemble", json={"conversation": C, "branch": "main",
                                     "participant": "assistant", "budget": 400,
                                     "query": "where does Ana live now"}, headers=key)
    assert a.status_code == 200, a.text
    assert any(d["ref"] == "m5" and d["as"] == "recalled" for d in a.json()["included"])
