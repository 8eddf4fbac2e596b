"""Every input the API reads is bounded: finite JSON numbers, strict and ranged seeds, non-empty specs."""

from __future__ import annotations

import warnings
from typing import Any

import pytest

pytest.importorskip("fastapi", reason="the server tests need fastapi (pip install 'tonk-rl[serve]')")

with warnings.catch_warnings():  # starlette's TestClient warns about httpx on import
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

from frontends.server import MAX_SEED, create_app  # noqa: E402
from tonk_env.engine import make_rules, new_game, to_record  # noqa: E402


@pytest.fixture(scope="module")
def client() -> TestClient:
    return TestClient(create_app(max_games=1000))


@pytest.fixture(scope="module")
def gid(client: TestClient) -> str:
    return str(client.post("/api/games", json={"agents": ["random"], "seed": 1}).json()["game_id"])


def _record() -> str:
    import json

    return json.dumps(to_record(new_game(make_rules(), 2, seed=1)))


NOT_FINITE = ["NaN", "Infinity", "-Infinity", "1e400", "-1e400"]
FINITE = "a JSON number must be finite: NaN, Infinity and numbers beyond 1.8e308 are not accepted"


@pytest.mark.parametrize("number", NOT_FINITE)
@pytest.mark.parametrize(
    ("route", "body"),
    [
        ("/api/games", '{"seed": %s}'),
        ("/api/games", '{"options": {"instant_win_pay": %s}}'),
        ("/api/games/{gid}/actions", '{"action": %s}'),
        ("/api/games/{gid}/actions", '{"action": "draw", "seat": %s}'),
        ("/api/agent-action", '{"agent": "random", "record": %s, "seed": %s}'),
    ],
)
def test_numbers_that_are_not_finite_are_a_422_that_does_not_echo_them(
    client: TestClient, gid: str, route: str, body: str, number: str
) -> None:
    before = client.get(f"/api/games/{gid}").json()
    text = body % ((_record(), number) if body.count("%s") == 2 else number)
    r = client.post(route.format(gid=gid), content=text, headers={"content-type": "application/json"})
    assert r.status_code == 422, r.text
    # one fixed answer, whatever the number: nothing is echoed
    assert r.json() == {
        "detail": f"invalid request: body: {FINITE}",
        "errors": [{"loc": ["body"], "msg": FINITE, "type": "json_invalid"}],
    }
    assert client.get(f"/api/games/{gid}").json() == before


def test_json_that_python_reads_but_this_api_does_not_is_a_422(client: TestClient) -> None:
    for text in ["{" * 100_000, '{"seed": ' + "9" * 5000 + "}", '{"players": 2', "[1,]"]:
        r = client.post("/api/games", content=text[:60_000], headers={"content-type": "application/json"})
        assert r.status_code == 422 and "not JSON" in r.json()["detail"] and len(r.text) < 1000, r.text


@pytest.mark.parametrize(
    "body",
    [
        {"seed": False},
        {"seed": True},
        {"seed": -1},
        {"seed": MAX_SEED + 1},
        {"seed": 1.5},
        {"seed": "7"},
        {"players": True},
        {"seat": False},
        {"agents": [""]},
        {"agents": ["random"] * 6},
        {"agents": ["x" * 1001]},
        {"rules": "x" * 101},
    ],
)
def test_new_game_fields_are_strict_and_bounded(client: TestClient, body: dict[str, Any]) -> None:
    r = client.post("/api/games", json=body)
    assert r.status_code == 422, r.text
    assert r.json()["detail"].startswith("invalid request: ") and len(r.text) < 1500


def test_the_seed_range_is_open_to_its_ends(client: TestClient) -> None:
    for seed in (0, MAX_SEED):
        r = client.post("/api/games", json={"agents": ["random"], "seed": seed})
        assert r.status_code == 201, r.text
        client.delete(f"/api/games/{r.json()['game_id']}")
    rec = to_record(new_game(make_rules(), 2, seed=1))
    assert client.post(
        "/api/agent-action", json={"agent": "random", "record": rec, "seed": MAX_SEED}
    ).is_success
    for seed in (False, -1, MAX_SEED + 1):
        r = client.post("/api/agent-action", json={"agent": "random", "record": rec, "seed": seed})
        assert r.status_code == 422, r.text
    r = client.post("/api/agent-action", json={"agent": "", "record": rec})
    assert r.status_code == 422


def test_the_schema_states_the_bounds(client: TestClient) -> None:
    schemas = client.get("/openapi.json").json()["components"]["schemas"]
    new = schemas["NewGame"]["properties"]
    seed = next(s for s in new["seed"]["anyOf"] if s.get("type") == "integer")
    assert seed["minimum"] == 0 and seed["maximum"] == MAX_SEED
    assert new["agents"]["items"]["minLength"] == 1 and new["agents"]["maxItems"] == 5


def test_payout_options_that_overflow_are_a_4xx(client: TestClient) -> None:
    options = {"instant_win_pay": 1e308, "instant_win_totals": [49, 50]}
    r = client.post("/api/games", json={"agents": ["random"], "options": options, "seed": 1})
    assert r.status_code in (201, 400), r.text
