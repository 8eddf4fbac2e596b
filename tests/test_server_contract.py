"""The OpenAPI document is the API: schemathesis checks every operation against it, in-process.

A few generated requests per operation (valid ones from the schema); each
answer must have a declared status, match its declared schema and headers,
and never be a 5xx; a request the schema allows is never a 422. It may be a
400: what a schema cannot state (an agent spec the registry does not know,
an illegal action, rules that do not fit the table) is the server's 400.
"""

from __future__ import annotations

import warnings

import pytest

pytest.importorskip("fastapi", reason="the server tests need fastapi (pip install 'tonk-rl[serve]')")
schemathesis = pytest.importorskip("schemathesis", reason="the contract test needs schemathesis")

from hypothesis import HealthCheck, settings  # noqa: E402

from frontends.server import Limits, create_app  # noqa: E402

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    APP = create_app(max_games=10_000, limits=Limits(max_client_games=10_000, max_client_work=100))
    CONFIG = schemathesis.config.SchemathesisConfig.from_dict(
        {"checks": {"positive_data_acceptance": {"expected-statuses": ["2XX", 400, 403, 404, 409, 429]}}}
    )
    SCHEMA = schemathesis.openapi.from_asgi("/openapi.json", APP, config=CONFIG)


@SCHEMA.parametrize()
@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck), database=None)
def test_every_operation_keeps_to_the_openapi_document(case: schemathesis.Case) -> None:
    case.call_and_validate()
