"""The replay viewer's backend: a recorded hand as every position, hidden hands hidden until the end."""

from __future__ import annotations

import warnings

import pytest

from eval.duplicate import evaluate
from frontends.replay import MAX_REPLAY_ACTIONS, replay_frames
from tonk_env.engine import action_from_string, new_game, replay, to_record, view

pytest.importorskip("fastapi")
pytest.importorskip("httpx")
with warnings.catch_warnings():  # starlette's TestClient warns about httpx on import
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

from frontends.server import create_app  # noqa: E402


@pytest.fixture(scope="module")
def records() -> list[dict]:
    return evaluate(["heuristic:greedy", "random"], hands=4, players=2, seed=5, record=4).records


def test_frames_step_through_the_hand_from_one_seat(records: list[dict]) -> None:
    rec = records[0]
    out = replay_frames(rec, seat=1)
    frames, actions = out["frames"], out["actions"]
    assert len(frames) == len(actions) + 1 == len(rec["actions"]) + 1
    assert [a for _, a in actions] == rec["actions"] and out["seats"] == rec["seats"]
    s = new_game(replay(rec).rules, 2, deck=rec["deck"], dealer=rec["dealer"])
    assert frames[0]["hand_sizes"] == [5, 5] and frames[0]["seat"] == 1
    for i, f in enumerate(frames[:-1]):  # before the end: seat 0's hand is not in the frame, only its size
        assert f["result"] is None and "hands" not in f and "history" not in f
        assert sorted(f["hand"]) == sorted(view(s, 1)["hand"])
        assert f["hand_sizes"][0] == s.hands[0].bit_count()
        s.play(action_from_string(s, rec["actions"][i]))
    assert frames[-1]["result"] == rec["result"]  # every hand face up at the end


def test_open_view_shows_every_hand(records: list[dict]) -> None:
    out = replay_frames(records[1], seat=None)
    assert all(len(f["hands"]) == 2 for f in out["frames"]) and out["seat"] is None
    assert out["frames"][-1]["hands"] == out["result"]["hands"]


def test_bad_records_are_clear_errors(records: list[dict]) -> None:
    with pytest.raises(ValueError, match="not a Tonk hand record"):
        replay_frames({"format": "x"})
    with pytest.raises(ValueError, match="seat must be a seat 0..1"):
        replay_frames(records[0], seat=2)
    with pytest.raises(ValueError, match=f"at most {MAX_REPLAY_ACTIONS}"):
        replay_frames({**records[0], "actions": ["draw"] * (MAX_REPLAY_ACTIONS + 1)})
    with pytest.raises(ValueError, match="cannot be replayed"):
        replay_frames({**records[0], "actions": ["discard 4S", *records[0]["actions"]]})


def test_replay_route_and_page() -> None:
    client = TestClient(create_app())
    assert "Tonk replay" in client.get("/replay").text
    rec = to_record(new_game(replay({**_finished()}).rules, 2, seed=1))  # a hand not yet played
    r = client.post("/api/replay", json={"record": rec, "seat": 0})
    assert r.status_code == 200 and len(r.json()["frames"]) == 1 and r.json()["result"] is None
    bad = client.post("/api/replay", json={"record": {**rec, "deck": "nonsense"}, "seat": 0})
    assert bad.status_code == 400 and bad.json()["detail"].startswith("cannot replay the record")
    assert client.post("/api/replay", json={"record": rec, "seat": 5}).status_code == 400
    assert client.post("/api/replay", json={"seat": 0}).status_code == 422
    # a finished game of the server: its record replays to the same result
    g = client.post("/api/games", json={"agents": ["random"], "seed": 3}).json()
    while g["view"]["result"] is None:
        legal = g["view"]["legal_actions"]
        g = client.post(f"/api/games/{g['game_id']}/actions", json={"action": legal[-1]}).json()
    record = client.get(f"/api/games/{g['game_id']}/record").json()
    out = client.post("/api/replay", json={"record": record, "seat": None}).json()
    assert out["result"] == g["view"]["result"]


def _finished() -> dict:
    return evaluate(["random"], hands=2, seed=0, record=1).records[0]
