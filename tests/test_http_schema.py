"""schemathesis against the served OpenAPI document: for a bounded number of generated requests
per endpoint, no response is a 5xx and every response matches the documented status codes,
content type and schema. A real uvicorn server on loopback, on SQLite and on PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.config import SchemathesisConfig
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    negative_data_rejection,
    response_schema_conformance,
    status_code_conformance,
)

from tests.conformance.test_runtime import session
from tests.http_server import running
from vigente.http import ServiceConfig, create_app

ADMIN_KEY = "schema-admin-key-0123456789abcdef"

#: Generated requests per endpoint and mode (bounded: the whole run takes about a minute).
EXAMPLES = {"sqlite": 15, "postgres": 5}

@schemathesis.check
def one_error_shape(ctx: Any, response: Any, case: Any) -> bool | None:
    """Every 4xx and 5xx has the one error shape, its status repeated, a code and a message
    (issue 21: a bad body was answered with the code ``h_t_t_p_exception``)."""
    if response.status_code < 400:
        return None
    body = response.json()
    error = body.get("error") if isinstance(body, dict) else None
    assert isinstance(error, dict) and set(body) == {"error"}, f"not the error shape: {body!r}"
    assert error.get("status") == response.status_code, body
    code, message = error.get("code"), error.get("message")
    assert isinstance(code, str) and code.islower() and "h_t_t_p" not in code, body
    assert isinstance(message, str) and message, body
    return None


CHECKS = [
    not_a_server_error,
    one_error_shape,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]


@pytest.fixture(params=["sqlite", "postgres"])
def served(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[str, str, str]]:
    """(base URL, a tenant key, backend) of a server holding one tenant with some data."""
    root = (
        str(tmp_path / "data")
        if request.param == "sqlite"
        else request.getfixturevalue("postgres_url")
    )
    app = create_app(ServiceConfig(root, admin_key=ADMIN_KEY, rate=10_000, burst=10_000))
    admin = {"Authorization": f"Bearer {ADMIN_KEY}"}
    with running(app) as url, httpx.Client(base_url=url) as c:
        c.post("/v1/admin/tenants", json={"name": "fuzz"}, headers=admin).raise_for_status()
        key = c.post("/v1/admin/tenants/fuzz/keys",
            json={"role": "service"}, headers=admin).json()["key"]
        auth = {"Authorization": f"Bearer {key}"}
        c.post(
            "/v1/statements",
            headers=auth,
            json={
                "statements": [
                    {
                        "op": "record",
                        "lineage": "svc/limit",
                        "value": 80,
                        "source": "policy",
                        "valid_from": "2026-09-01",
                        "known_at": "2026-09-03",
                    }
                ]
            },
        ).raise_for_status()
        c.post(
            "/v1/documents",
            headers=auth,
            json={
                "lineage_id": "cdd",
                "text": "Customer due diligence for uploads.",
                "reference": "Circular 7/2023",
                "valid_from": "2023-06-01",
                "published": "2023-05-12",
            },
        ).raise_for_status()
        # a conversation with two branches and one assembly, for the runtime endpoints
        c.post("/v1/runtime/events", headers=auth, json={"events": session()}).raise_for_status()
        c.post(
            "/v1/assemble",
            headers=auth,
            json={"conversation": "trip-42", "branch": "main", "participant": "agent"},
        ).raise_for_status()
        yield url, key, request.param


def _fuzz(
    operation: Any, url: str, headers: dict[str, str], examples: int, mode: Any, checks: list[Any]
) -> None:
    @settings(
        max_examples=examples,
        deadline=None,
        database=None,
        derandomize=True,
        phases=[Phase.explicit, Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(data=st.data())
    def run(data: st.DataObject) -> None:
        case = data.draw(operation.as_strategy(generation_mode=mode, headers=headers))
        case.call_and_validate(base_url=url, checks=checks, timeout=30)

    run()


def test_every_endpoint_matches_its_schema_and_never_fails(
    served: tuple[str, str, str],
) -> None:
    url, key, backend = served
    # Invalid data must be refused with a 4xx; 413 (a body over the size limit) is one too.
    config = SchemathesisConfig.from_dict(
        {
            "checks": {
                "negative_data_rejection": {
                    "expected-statuses": ["400", "401", "403", "404", "409", "413", "422", "429"]
                }
            }
        }
    )
    schema = schemathesis.openapi.from_url(f"{url}/openapi.json", config=config)
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 20
    for operation in operations:
        token = ADMIN_KEY if operation.path.startswith("/v1/admin") else key
        headers = {"Authorization": f"Bearer {token}"}
        _fuzz(operation, url, headers, EXAMPLES[backend], GenerationMode.POSITIVE, CHECKS)
        if operation.body or operation.query:
            _fuzz(
                operation,
                url,
                headers,
                max(3, EXAMPLES[backend] // 3),
                GenerationMode.NEGATIVE,
                [*CHECKS, negative_data_rejection],
            )


#: Chained-call scenarios, and calls in each (bounded like the stateless run).
STATEFUL = {"sqlite": (12, 6), "postgres": (4, 5)}


def test_chained_calls_never_fail(served: tuple[str, str, str]) -> None:
    """Stateful: schemathesis chains operations along the links it infers from the schema (a
    document added, then read; a proposal submitted, edited, approved; an assembly made, then
    explained, diffed and rebuilt), each step with data a real response returned. No step is
    a 5xx and every refusal has the one error shape (issue 35, item 10)."""
    url, key, backend = served
    schema = schemathesis.openapi.from_url(f"{url}/openapi.json")
    workflow = schema.as_state_machine()

    class Chained(workflow):  # type: ignore[misc, valid-type]
        def get_call_kwargs(self, case: Any) -> dict[str, Any]:
            token = ADMIN_KEY if case.operation.path.startswith("/v1/admin") else key
            return {"base_url": url, "headers": {"Authorization": f"Bearer {token}"},
                    "timeout": 30}

        def validate_response(self, response: Any, case: Any,
                              additional_checks: Any = None, **kwargs: Any) -> None:
            calls.append((case.operation.path, response.status_code))
            case.validate_response(response, checks=[not_a_server_error, one_error_shape])

    calls: list[tuple[str, int]] = []
    examples, steps = STATEFUL[backend]
    Chained.run(settings=settings(max_examples=examples, stateful_step_count=steps,
                                  deadline=None, database=None, derandomize=True,
                                  suppress_health_check=list(HealthCheck)))
    assert len({path for path, _ in calls}) >= 5, calls  # it chained several operations
    assert any(status < 300 for _, status in calls), calls  # some steps used real data
