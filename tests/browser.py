"""Debian's Chromium driven by Playwright for the inspector's browser tests (never a browser
download); the tests skip, saying why, where it is not installed."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

__all__ = ["CHROMIUM", "CHROMIUM_ARGS", "chromium", "watched_page"]

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@contextmanager
def chromium() -> Iterator[Any]:
    """A launched headless Chromium (a Playwright browser) until the block ends."""
    if not CHROMIUM.exists():
        pytest.skip(
            f"Chromium is not installed at {CHROMIUM}: `make test` installs it with "
            "`apt-get install -y chromium` as root where apt-get is available, and could not here"
        )
    os.environ.setdefault("PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD", "1")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)
        yield b
        b.close()


def watched_page(browser: Any, origin: str, *, console: bool = True) -> tuple[Any, Any, list[str]]:
    """A new context and page of ``browser`` (1280×900) and the list its failures go to: script
    errors, requests to anywhere but ``origin`` and, with ``console``, console errors (a 404
    page's own load logs one, so a test of 404 pages leaves them out)."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    failures: list[str] = []
    if console:
        page.on("console", lambda m: failures.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: failures.append(str(e)))
    page.on(
        "request",
        lambda r: (
            failures.append(f"off-site request {r.url}") if not r.url.startswith(origin) else None
        ),
    )
    return context, page, failures
