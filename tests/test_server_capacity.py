"""The server's fair capacity: cheap routes never wait for agents, bounded queues and shares, eviction."""

from __future__ import annotations

import os
import signal
import threading
import time
import warnings
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("fastapi", reason="the server tests need fastapi (pip install 'tonk-rl[serve]')")

with warnings.catch_warnings():  # starlette's TestClient warns about httpx on import
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

from frontends.server import FRESH_SECONDS, Busy, Limits, WorkQueue, create_app  # noqa: E402
from tonk_env.engine import make_rules, new_game, to_record  # noqa: E402


class Blocker:
    """Jobs that hold an agent worker until released."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.started = threading.Semaphore(0)

    def __call__(self) -> str:
        self.started.release()
        self.release.wait(60)
        return "done"


@pytest.fixture
def blocker() -> Iterator[Blocker]:
    b = Blocker()
    yield b
    b.release.set()


def _query() -> dict[str, Any]:
    return {"agent": "random", "record": to_record(new_game(make_rules(), 2, seed=1))}


def test_cheap_routes_answer_while_every_agent_worker_is_busy(blocker: Blocker) -> None:
    app = create_app(limits=Limits(workers=2))
    c = TestClient(app)
    made = c.post("/api/games", json={"agents": ["random"], "seed": 1})
    gid = made.json()["game_id"]
    queue: WorkQueue = app.state.queue
    jobs = [queue.submit(f"other{i}", None, blocker) for i in range(3)]
    for _ in range(2):
        assert blocker.started.acquire(timeout=30)
    assert queue.counts() == (2, 1)  # both workers held, one job waiting
    for path in ["/api/rules", "/api/agents", f"/api/games/{gid}", "/openapi.json", "/"]:
        assert c.get(path).status_code == 200, path
    assert c.get(f"/api/games/{gid}/record").status_code in (200, 409)
    assert c.delete(f"/api/games/{gid}").status_code == 204
    blocker.release.set()
    assert [j.future.result(timeout=30) for j in jobs] == ["done"] * 3


def test_a_full_queue_is_a_503_and_a_clients_share_a_429_with_retry_after(blocker: Blocker) -> None:
    app = create_app(limits=Limits(workers=1, max_queue=1, max_client_work=2))
    c = TestClient(app)
    queue: WorkQueue = app.state.queue
    held = [queue.submit("other", None, blocker)]
    assert blocker.started.acquire(timeout=30)
    held.append(queue.submit("other", None, blocker))  # waits: the queue is now full
    r = c.post("/api/agent-action", json=_query())
    assert r.status_code == 503 and "--max-queue" in r.json()["detail"], r.text
    assert int(r.headers["retry-after"]) >= 1
    with pytest.raises(Busy) as refused:
        queue.submit("other", None, blocker)  # the same client past its share
    assert refused.value.status == 429 and "--max-client-work" in refused.value.detail
    blocker.release.set()
    assert [j.future.result(timeout=30) for j in held] == ["done"] * 2  # the queue is empty again
    assert c.post("/api/agent-action", json=_query()).status_code == 200


def test_a_game_takes_one_request_at_a_time(blocker: Blocker) -> None:
    app = create_app(limits=Limits(workers=1))
    c = TestClient(app)
    gid = c.post("/api/games", json={"agents": ["random"], "seed": 1}).json()["game_id"]
    before = c.get(f"/api/games/{gid}").json()
    app.state.queue.submit("someone", gid, blocker)  # a request of this game is running
    assert blocker.started.acquire(timeout=30)
    r = c.post(f"/api/games/{gid}/actions", json={"action": before["view"]["legal_actions"][0]})
    assert r.status_code == 429 and "busy" in r.json()["detail"] and "retry-after" in r.headers
    assert c.get(f"/api/games/{gid}").json() == before


def test_the_time_limit_counts_the_wait_for_a_worker(blocker: Blocker) -> None:
    app = create_app(limits=Limits(workers=1, max_seconds=0.3), max_games=5)
    c = TestClient(app)
    app.state.queue.submit("other", None, blocker)
    assert blocker.started.acquire(timeout=30)
    r = c.post("/api/agent-action", json=_query())
    assert r.status_code == 503 and "waited" in r.json()["detail"] and "--max-seconds" in r.json()["detail"]
    assert "retry-after" in r.headers
    r = c.post("/api/games", json={"agents": ["random"], "seed": 1})
    assert r.status_code == 503 and app.state.lobby.games == {}  # taken off the queue: no game made
    assert app.state.queue.counts() == (1, 0)
    blocker.release.set()


def test_the_queue_serves_clients_in_turn() -> None:
    queue = WorkQueue(workers=1, max_queue=10, max_client=10, max_seconds=10)
    gate, running = threading.Event(), threading.Event()
    order: list[str] = []
    first = queue.submit("a", None, lambda: running.set() or gate.wait(30))
    assert running.wait(30)
    jobs = [queue.submit(who, None, lambda who=who: order.append(who)) for who in ["a", "a", "a", "b", "c"]]
    gate.set()
    first.future.result(timeout=30)
    for job in jobs:
        job.future.result(timeout=30)
    assert order == ["a", "b", "c", "a", "a"]  # a's burst does not hold b and c back
    queue.close()


def test_a_jobs_share_is_free_by_the_time_its_answer_arrives() -> None:
    # a client that sends its next move the moment the last is answered must not find its game busy
    queue = WorkQueue(workers=1, max_queue=5, max_client=1, max_seconds=10)
    follow_up: list[Any] = []
    sent = threading.Event()

    def next_move(_: Any) -> None:  # runs as the answer is handed over, in the worker thread
        try:
            follow_up.append(queue.submit("a", "g1", lambda: "second"))
        except Busy as e:
            follow_up.append(e)
        sent.set()

    first = queue.submit("a", "g1", lambda: "first")
    first.future.add_done_callback(next_move)
    assert first.future.result(timeout=30) == "first" and sent.wait(30)
    assert not isinstance(follow_up[0], Busy), follow_up[0]
    assert follow_up[0].future.result(timeout=30) == "second"
    queue.close()


def test_a_waiting_job_can_be_cancelled_and_frees_its_share(blocker: Blocker) -> None:
    queue = WorkQueue(workers=1, max_queue=5, max_client=2, max_seconds=10)
    queue.submit("a", None, blocker)
    assert blocker.started.acquire(timeout=30)
    waiting = queue.submit("a", "g1", lambda: "never")
    with pytest.raises(Busy):
        queue.submit("a", None, lambda: "x")
    assert queue.cancel(waiting) and waiting.future.cancelled()
    assert queue.counts() == (1, 0)
    queue.submit("a", "g1", lambda: "now")  # the game and the share are free again
    blocker.release.set()
    queue.close()


# -- the lobby --------------------------------------------------------------------------------------
def test_a_burst_of_unplayed_games_is_evicted_once_idle_for_a_minute() -> None:
    app = create_app(max_games=4, limits=Limits(max_client_games=4))
    c = TestClient(app)
    lobby = app.state.lobby
    ids = [c.post("/api/games", json={"agents": ["random"], "seed": i}).json()["game_id"] for i in range(4)]
    full = c.post("/api/games", json={"agents": ["random"]})
    assert full.status_code == 429 and 1 <= int(full.headers["retry-after"]) <= FRESH_SECONDS
    # the person plays game 0; every game has been idle for longer than FRESH_SECONDS
    legal = c.get(f"/api/games/{ids[0]}").json()["view"]["legal_actions"]
    assert c.post(f"/api/games/{ids[0]}/actions", json={"action": legal[0]}).status_code == 200
    for gid in ids:
        lobby.games[gid].used -= FRESH_SECONDS + 1
    lobby.games[ids[2]].used -= 5  # idle longest among the unplayed
    assert c.post("/api/games", json={"agents": ["random"]}).status_code == 201
    assert ids[2] not in lobby.games and ids[0] in lobby.games
    r = c.get(f"/api/games/{ids[2]}")
    assert r.status_code == 404 and "evicted" in r.json()["detail"]


def test_played_games_are_not_evicted_before_the_idle_timeout() -> None:
    app = create_app(max_games=2, limits=Limits(max_client_games=3))
    c = TestClient(app)
    for i in range(2):
        gid = c.post("/api/games", json={"agents": ["random"], "seed": i}).json()["game_id"]
        legal = c.get(f"/api/games/{gid}").json()["view"]["legal_actions"]
        assert c.post(f"/api/games/{gid}/actions", json={"action": legal[0]}).status_code == 200
        app.state.lobby.games[gid].used -= FRESH_SECONDS + 1
    r = c.post("/api/games", json={"agents": ["random"]})
    assert r.status_code == 429 and "too many live games (2)" in r.json()["detail"]


def test_one_client_holds_at_most_its_share_of_the_lobby() -> None:
    app = create_app(max_games=10, limits=Limits(max_client_games=2))
    c = TestClient(app)
    for i in range(2):
        assert c.post("/api/games", json={"agents": ["random"], "seed": i}).status_code == 201
    r = c.post("/api/games", json={"agents": ["random"]})
    assert r.status_code == 429 and "--max-client-games" in r.json()["detail"]
    other = TestClient(app, client=("10.0.0.9", 5000))
    assert other.post("/api/games", json={"agents": ["random"]}).status_code == 201
    mine = [g for g in app.state.lobby.games.values() if g.client == "testclient"]
    mine[0].used -= FRESH_SECONDS + 1  # never played and idle: the client's own game makes room
    assert c.post("/api/games", json={"agents": ["random"]}).status_code == 201
    assert mine[0].gid not in app.state.lobby.games and mine[1].gid in app.state.lobby.games


# -- the agents' own process (what tonk serve runs) --------------------------------------------------
def test_the_desk_in_its_own_process_plays_answers_and_stops_at_the_time_limit(
    capfd: pytest.CaptureFixture[str],
) -> None:
    caps = Limits(max_budget=100_000, max_samples=100_000, max_candidates=10, max_seconds=3)
    app = create_app(limits=caps, isolate=True)
    try:
        c = TestClient(app)
        made = c.post("/api/games", json={"agents": ["heuristic:greedy"], "seed": 3})
        assert made.status_code == 201, made.text
        game = made.json()
        gid = game["game_id"]
        for _ in range(400):
            if game["over"]:
                break
            legal = game["view"]["legal_actions"]
            r = c.post(f"/api/games/{gid}/actions", json={"action": "drop" if "drop" in legal else legal[-1]})
            assert r.status_code == 200, r.text
            game = r.json()
        assert game["over"] and c.get(f"/api/games/{gid}/record").json()["deck"]
        assert c.post(f"/api/games/{gid}/next").json()["hand_number"] == 2
        assert c.post(f"/api/games/{gid}/actions", json={"action": "x 99"}).status_code == 400
        # the child's refusals come back by name and keep their status and words
        wrong = c.post(f"/api/games/{gid}/actions", json={"action": "draw", "seat": 1})
        assert wrong.status_code == 409 and "person plays seat 0, not seat 1" in wrong.json()["detail"]
        assert c.post("/api/agent-action", json=_query()).status_code == 200
        slow = {**_query(), "agent": "search:ismcts?budget=20000&drop_samples=20000&candidates=10&takes=all"}
        r = c.post("/api/agent-action", json=slow)  # tens of seconds of search: stopped in the child
        assert r.status_code == 503 and "--max-seconds" in r.json()["detail"], r.text
        assert c.delete(f"/api/games/{gid}").status_code == 204
        assert c.post(f"/api/games/{gid}/next").status_code == 404
        # a desk process killed (as by the OOM killer) left every later request a 503 until the server
        # was restarted: now a new one takes its place, and the lobby forgets the games it held
        gid = c.post("/api/games", json={"agents": ["heuristic:greedy"], "seed": 3}).json()["game_id"]
        desk, old = app.state.desk, app.state.desk._process
        os.kill(old.pid, signal.SIGKILL)
        deadline = time.monotonic() + 120
        while desk.restarts == 0:
            assert time.monotonic() < deadline, "no new agents' process"
            time.sleep(0.05)
        assert desk._process is not old and desk._process.is_alive()
        assert c.get(f"/api/games/{gid}").status_code == 404
        made = c.post("/api/games", json={"agents": ["heuristic:greedy"], "seed": 3})
        assert made.status_code == 201, made.text
        legal = made.json()["view"]["legal_actions"]
        played = c.post(f"/api/games/{made.json()['game_id']}/actions", json={"action": legal[0]})
        assert played.status_code == 200, played.text
    finally:
        app.state.desk.close()
    assert not app.state.desk._process.is_alive()
    err = capfd.readouterr().err
    assert "tonk serve: the agents' process was killed by SIGKILL (out of memory" in err, err
    assert "the games it held are gone; starting a new one" in err
