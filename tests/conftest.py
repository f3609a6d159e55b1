"""Shared fixtures. ``vg`` is a real, empty store on every backend of the conformance suite."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

from vigente import Vigente
from vigente.retrieval import MiniLMEmbedder

pytest_plugins = ["tests.postgres_server"]

# Property tests draw the same examples on every run (a CI run is reproducible, and a failure
# seen once is seen again); HYPOTHESIS_EXPLORE=1 draws new ones each run, to look for more.
settings.register_profile("reproducible", derandomize=True, print_blob=True)
settings.register_profile("explore", print_blob=True)
settings.load_profile("explore" if os.environ.get("HYPOTHESIS_EXPLORE") else "reproducible")

ROOT = Path(__file__).resolve().parent.parent
#: The real data shared beside the repository (``../shared/data``); absent in a lone clone.
SHARED_DATA = ROOT.parent / "shared" / "data"
#: Small real samples kept in the repository, so that real-data tests run everywhere.
TEST_DATA = ROOT / "tests" / "data"

#: The whole Estonian corpus (shared) and a real slice of it (tests/data/legalize-ee/README.md).
LEGALIZE_EE_CORPUS = SHARED_DATA / "legalize-ee" / "versions.jsonl.xz"
LEGALIZE_EE_SLICE = TEST_DATA / "legalize-ee" / "versions.jsonl.xz"


def shared_file(path: Path) -> Path:
    """``path`` when it exists; otherwise the test skips, naming the missing path."""
    if not path.exists():
        pytest.skip(f"{path} is missing: put the shared data beside the repository ({SHARED_DATA})")
    return path


#: Every backend the conformance suite runs on.
BACKENDS = ["sqlite", "postgres"]


@pytest.fixture(params=BACKENDS)
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A URL of a fresh, empty database on each backend."""
    if request.param == "sqlite":
        return str(tmp_path / "vigente.db")
    url: str = request.getfixturevalue("postgres_url")
    return url


@pytest.fixture
def vg(store_url: str) -> Iterator[Vigente]:
    store = Vigente.open(store_url)
    yield store
    store.close()


@pytest.fixture
def sqlite_vg(tmp_path: Path) -> Iterator[Vigente]:
    """A real SQLite store, for tests that are not about backend parity."""
    store = Vigente.open(tmp_path / "vigente.db")
    yield store
    store.close()


@pytest.fixture(scope="session")
def minilm() -> MiniLMEmbedder:
    """The real built-in embedding model, loaded once per test session."""
    embedder = MiniLMEmbedder()
    embedder.embed(["warm up"])
    return embedder
