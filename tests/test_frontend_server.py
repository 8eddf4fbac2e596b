"""The HTTP/JSON server (``tonk serve``) through FastAPI's TestClient: games, errors, limits, agents."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")

import warnings

with warnings.catch_warnings():  # starlette's TestClient warns about httpx on import
    warnings.filterwarnings("ignore", message="Using `httpx`")
    from fastapi.testclient import TestClient

from agents.mlp import MLPPolicy
from frontends.server import create_app
from tonk_cli.main import main
from tonk_env.engine import (
    action_table,
    make_rules,
    new_game,
    replay,
    seat_info,
    to_record,
)
from tonk_env.obs import OBS_VERSION, LazyObs, obs_layout


def random_policy(path: Path, players: int = 2, seed: int = 0) -> Path:
    """An MLPPolicy with random weights saved as .npz (an ``npz:`` agent)."""
    rng = np.random.default_rng(seed)
    obs, acts = obs_layout(players).size, action_table(False).size
    layers = [
        (rng.normal(0, 0.3, (16, obs)), rng.normal(0, 0.1, 16)),
        (rng.normal(0, 0.3, (acts, 16)), rng.normal(0, 0.1, acts)),
    ]
    rules = make_rules()
    meta = {
        "num_players": players,
        "rules_hash": rules.hash,
        "rules": rules.to_dict(),
        "obs_version": OBS_VERSION,
    }
    MLPPolicy(layers, meta=meta).save_npz(path)
    return path


@pytest.fixture()
def npz(tmp_path: Path) -> Path:
    return random_policy(tmp_path / "net.npz")


@pytest.fixture()
def client(npz: Path) -> TestClient:
    return TestClient(create_app(agents=[f"npz:{npz}"], max_games=3, idle_timeout=600))


def _new(client: TestClient, **body: Any) -> dict[str, Any]:
    r = client.post("/api/games", json=body)
    assert r.status_code == 201, r.text
    return r.json()


def _play_to_end(client: TestClient, game: dict[str, Any], limit: int = 400) -> dict[str, Any]:
    gid = game["game_id"]
    for _ in range(limit):
        if game["over"]:
            return game
        legal = game["view"]["legal_actions"]
        # draw and discard for a few turns, then drop when allowed
        move = (
            "drop" if game["view"]["turn"] >= 6 and "drop" in legal else next(a for a in legal if a != "drop")
        )
        r = client.post(f"/api/games/{gid}/actions", json={"action": move})
        assert r.status_code == 200, r.text
        game = r.json()
    raise AssertionError("the hand did not end")


def test_a_hand_is_played_to_its_end_over_http(client: TestClient) -> None:
    game = _new(client, players=3, agents=["heuristic:greedy", "random"], seed=5)
    assert game["agents"] == {"1": "heuristic:greedy", "2": "random"}
    v = game["view"]
    assert v["seat"] == 0 and v["legal_actions"] == ["drop", "draw", "take"] and len(v["hand"]) == 5
    gid = game["game_id"]
    r = client.post(f"/api/games/{gid}/actions", json={"action": 1})  # an id works too: draw
    assert r.status_code == 200 and r.json()["view"]["phase"] == "play"
    end = _play_to_end(client, r.json())
    res = end["view"]["result"]
    assert res is not None and len(res["hands"]) == 3 and sum(res["payoffs"]) == 0
    assert end["scores"] == res["payoffs"] and end["hands_played"] == 1 and end["summary"]
    seats = {s for s, _ in end["log"]}
    assert 0 in seats and (1 in seats or 2 in seats or res["kind"] in ("drop_won", "caught"))
    # the record of a finished hand replays to the same result
    rec = client.get(f"/api/games/{gid}/record").json()
    assert replay(rec).result.to_dict() == res
    # the next hand: the deal passed to the left, the score carries on
    nxt = client.post(f"/api/games/{gid}/next").json()
    assert nxt["hand_number"] == 2 and nxt["view"]["dealer"] == 0
    extra = nxt["view"]["result"]["payoffs"] if nxt["over"] else [0, 0, 0]  # the agents may end it at once
    assert nxt["scores"] == [a + b for a, b in zip(res["payoffs"], extra, strict=True)]
    assert client.delete(f"/api/games/{gid}").status_code == 204
    assert client.get(f"/api/games/{gid}").status_code == 404


def test_bad_requests_answer_4xx_and_change_nothing(client: TestClient) -> None:
    game = _new(client, seed=2, agents=["random"])
    gid = game["game_id"]
    before = client.get(f"/api/games/{gid}").json()
    url = f"/api/games/{gid}/actions"
    cases = [
        (client.post(url, json={"action": "fly"}), 400, "cannot read action 'fly'"),
        (client.post(url, json={"action": "discard 4S"}), 400, "legal actions: drop, draw, take"),
        (client.post(url, json={"action": 999}), 400, "out of range"),
        (client.post(url, json={"action": 5}), 400, "not legal now"),
        (client.post(url, json={"action": "draw", "seat": 1}), 409, "seat 0, not seat 1"),
        (client.post(url, content=b'{"action": ', headers={"content-type": "application/json"}), 422, "JSON"),
        (client.post(url, json={"action": "draw", "extra": 1}), 422, "extra"),
        (client.post(url, json={}), 422, "action"),
        (client.post(f"/api/games/{gid}/next"), 409, "not over"),
        (client.get(f"/api/games/{gid}/record"), 409, "deck"),
        (client.post("/api/games/nosuch/actions", json={"action": "draw"}), 404, "no live game"),
        (client.post("/api/games", json={"rules": "nope"}), 400, "unknown rules preset"),
        (client.post("/api/games", json={"options": {"hand_size": 9}}), 400, "hand_size"),
        (client.post("/api/games", json={"players": 7}), 422, "players"),
        (client.post("/api/games", json={"players": 2, "seat": 3}), 400, "seat must be 0..1"),
        (client.post("/api/games", json={"agents": ["nosuch"]}), 400, "unknown agent kind"),
        (client.post("/api/games", json={"agents": ["heuristic:greedy?drop_at=99"]}), 400, "maximum"),
        (client.post("/api/games", json={"agents": ["ppo:/etc/passwd"]}), 403, "only the paths"),
        (client.post("/api/games", json={"agents": ["search:ismcts?rollout=npz:/x.npz"]}), 403, "only the"),
        (client.post("/api/games", json={"agents": ["search:ismcts?prior=ppo:/etc"]}), 403, "only the paths"),
        (client.post("/api/games", json={"agents": ["search:ismcts?rollout=nosuch"]}), 400, "unknown agent"),
    ]
    for r, status, text in cases:
        assert r.status_code == status, (r.status_code, r.text)
        assert text in str(r.json()["detail"]), r.text
    assert client.get(f"/api/games/{gid}").json() == before
    # after all that the game still plays
    assert client.post(url, json={"action": "draw"}).status_code == 200


def test_not_your_turn_and_finished_hands(client: TestClient) -> None:
    game = _new(client, seed=3, agents=["random"])
    gid = game["game_id"]
    r = client.post(f"/api/games/{gid}/actions", json={"action": "drop"})
    assert r.status_code == 200 and r.json()["over"]
    r = client.post(f"/api/games/{gid}/actions", json={"action": "draw"})
    assert r.status_code == 409 and "hand is over" in r.json()["detail"]
    # the person in seat 1: the agent in seat 0 plays first, automatically
    g1 = _new(client, seed=3, seat=1, agents=["heuristic:greedy"])
    assert g1["view"]["seat"] == 1 and (g1["over"] or g1["view"]["current_player"] == 1)
    assert g1["over"] or ({s for s, _ in g1["moves"]} == {0} and g1["moves"][-1][1].startswith("discard"))


def test_agent_files_only_from_the_allow_list(client: TestClient, npz: Path, tmp_path: Path) -> None:
    other = random_policy(tmp_path / "other.npz", seed=1)
    for spec in (f"npz:{npz}", f"npz:{npz}?deterministic=false"):
        assert client.post("/api/games", json={"agents": [spec], "seed": 1}).status_code == 201
    r = client.post("/api/games", json={"agents": [f"npz:{other}"]})
    assert r.status_code == 403 and str(npz.resolve()) in r.json()["detail"]
    offered = client.get("/api/agents").json()
    assert offered["offered"][0] == f"npz:{npz}" and "heuristic:expert" in offered["offered"]
    assert offered["allowed_paths"] == [f"npz:{npz.resolve()}"]


def test_limits_on_live_and_idle_games(client: TestClient) -> None:
    ids = [_new(client, seed=i, agents=["random"])["game_id"] for i in range(3)]
    r = client.post("/api/games", json={"agents": ["random"]})
    assert r.status_code == 429 and "too many live games (3)" in r.json()["detail"]
    assert client.delete(f"/api/games/{ids[0]}").status_code == 204
    _new(client, agents=["random"])
    lobby = client.app.state.lobby
    lobby.games[ids[1]].used -= 10_000  # idle for longer than the timeout
    assert client.get(f"/api/games/{ids[1]}").status_code == 404
    assert len(lobby.games) == 2


def test_stateless_agent_action(client: TestClient, npz: Path) -> None:
    s = new_game(make_rules(), 2, seed=8)
    s.play(1)  # seat 0 draws; it must now discard
    rec = to_record(s)
    r = client.post("/api/agent-action", json={"agent": "heuristic:greedy", "record": rec, "seat": 0})
    assert r.status_code == 200, r.text
    out = r.json()
    assert out["seat"] == 0 and out["action"].startswith(("discard", "spread", "hit"))
    assert s.table.name(out["action_id"]) == out["action"]
    # the npz agent on the allow-list answers what the network chooses
    r = client.post("/api/agent-action", json={"agent": f"npz:{npz}", "record": rec})
    pol = MLPPolicy.load_npz(npz)
    assert r.json()["action_id"] == pol.act(LazyObs(s, 0), seat_info(s, 0))
    bad = [
        ({"agent": "nosuch", "record": rec}, 400, "unknown agent kind"),
        ({"agent": "random", "record": {**rec, "format": "x"}}, 400, "not a Tonk hand record"),
        ({"agent": "random", "record": {k: v for k, v in rec.items() if k != "deck"}}, 400, "deck"),
        ({"agent": "random", "record": {**rec, "actions": ["draw", "take"]}}, 400, "cannot be replayed"),
        ({"agent": "random", "record": rec, "seat": 1}, 409, "seat 0 is"),
        ({"agent": "npz:/tmp/not-allowed.npz", "record": rec}, 403, "only the paths"),
        ({"agent": "random"}, 422, "record"),
    ]
    for body, status, text in bad:
        r = client.post("/api/agent-action", json=body)
        assert r.status_code == status, r.text
        assert text in r.json()["detail"], r.text
    s.play(s.legal_actions()[0])
    s2 = new_game(make_rules(), 2, seed=8)
    s2.play(0)  # a drop ends the hand
    r = client.post("/api/agent-action", json={"agent": "random", "record": to_record(s2)})
    assert r.status_code == 409 and "over" in r.json()["detail"]
    # an agent trained for another table refuses it (a seeded deal: some deals end at once, which is a 409)
    three = to_record(new_game(make_rules(), 3, seed=8))
    r = client.post("/api/agent-action", json={"agent": f"npz:{npz}", "record": three})
    assert r.status_code == 400 and "2 players" in r.json()["detail"]


def test_openapi_schema_and_page(client: TestClient) -> None:
    schema = client.get("/openapi.json").json()
    for path in (
        "/api/games",
        "/api/games/{gid}",
        "/api/games/{gid}/actions",
        "/api/agent-action",
        "/api/games/{gid}/next",
        "/api/games/{gid}/record",
        "/api/agents",
        "/api/rules",
    ):
        assert path in schema["paths"], path
    assert "ActionIn" in schema["components"]["schemas"]
    r = client.get("/")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
    assert "/api/games" in r.text
    rules = client.get("/api/rules").json()
    assert "seven_card" in rules["presets"] and "hand_size" in rules["options"]


def test_serve_command_checks_its_arguments(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "--agents", "nosuch"]) == 2
    assert "tonk serve: error: unknown agent kind 'nosuch'" in capsys.readouterr().err
    assert main(["serve", "--agents", "ppo:/nonexistent/run"]) == 2
    assert "no such file or folder /nonexistent/run" in capsys.readouterr().err
    assert main(["serve", "--max-games", "0"]) == 2
    assert "--max-games must be at least 1" in capsys.readouterr().err
