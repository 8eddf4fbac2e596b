"""The browser game end to end: ``tonk serve``'s page in headless Chromium (Selenium), played by clicking.

Needs Debian's ``chromium`` and ``chromium-driver`` (``.ci/run`` installs them; by hand:
``apt-get install chromium chromium-driver``) and the ``selenium`` package (the ``test`` extra);
skips with the reason when one is missing. The server runs in a thread on 127.0.0.1 (loopback only).
"""

from __future__ import annotations

import os
import shutil
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("fastapi", reason="fastapi is not installed (pip install -e '.[test]')")
pytest.importorskip("uvicorn", reason="uvicorn is not installed (pip install -e '.[test]')")
pytest.importorskip("selenium", reason="selenium is not installed (pip install -e '.[test]')")

import uvicorn
from selenium import webdriver
from selenium.common.exceptions import StaleElementReferenceException, WebDriverException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as ec
from selenium.webdriver.support.ui import Select, WebDriverWait

from frontends.server import create_app

CHROMIUM = next((p for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome")) if p), None)
DRIVER = shutil.which("chromedriver")
_MISSING = [name for name, path in (("chromium", CHROMIUM), ("chromedriver", DRIVER)) if path is None]
if _MISSING:
    pytest.skip(
        f"{' and '.join(_MISSING)} not found on PATH: install Debian's chromium and chromium-driver "
        "(apt-get install chromium chromium-driver; .ci/run does this on CI)",
        allow_module_level=True,
    )


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture()
def server_url() -> Iterator[str]:
    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(create_app(), host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert time.monotonic() < deadline, "the server did not start"
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(10)


@pytest.fixture()
def browser() -> Iterator[webdriver.Chrome]:
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--window-size=1200,1000",
        "--disable-extensions",
        "--no-first-run",
    ):
        opts.add_argument(arg)
    try:
        driver = webdriver.Chrome(service=Service(executable_path=DRIVER), options=opts)
    except WebDriverException as e:
        pytest.skip(f"headless Chromium does not start here: {e.msg}")
    yield driver
    driver.quit()


def test_play_a_hand_in_the_browser(server_url: str, browser: webdriver.Chrome, tmp_path: Path) -> None:
    wait = WebDriverWait(browser, 20)
    browser.get(f"{server_url}/?delay=0&seed=7")
    wait.until(lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-ready") == "1")
    assert browser.find_element(By.ID, "error").text == ""
    Select(browser.find_element(By.ID, "agent")).select_by_visible_text("heuristic:greedy")
    Select(browser.find_element(By.ID, "rules")).select_by_visible_text("standard")
    browser.find_element(By.ID, "new-game").click()
    wait.until(
        lambda d: (
            d.find_elements(By.CSS_SELECTOR, "#moves button")
            or d.find_element(By.ID, "result").is_displayed()
        )
    )

    # the table: my five cards face up, the opponent's backs, the pile's top card
    if not browser.find_element(By.ID, "result").is_displayed():
        assert len(browser.find_elements(By.CSS_SELECTOR, "#hand .card[data-card]")) == 5
    assert browser.find_elements(By.CSS_SELECTOR, "#pile .card[data-card]")
    assert browser.find_elements(By.CSS_SELECTOR, "#opponents .seat")

    clicks = 0
    while not browser.find_element(By.ID, "result").is_displayed():
        assert clicks < 300, "the hand did not end"
        buttons = browser.find_elements(By.CSS_SELECTOR, "#moves button")
        assert buttons, browser.find_element(By.ID, "error").text
        names = [b.get_attribute("data-action") for b in buttons]
        # draw and discard for a few turns, then drop
        pick = (
            names.index("drop")
            if clicks >= 8 and "drop" in names
            else next(i for i, n in enumerate(names) if n != "drop")
        )
        buttons[pick].click()
        clicks += 1
        wait.until(ec.staleness_of(buttons[pick]))
        wait.until(
            lambda d: (
                d.find_elements(By.CSS_SELECTOR, "#moves button")
                or d.find_element(By.ID, "result").is_displayed()
            )
        )
    assert browser.find_element(By.ID, "error").text == ""

    summary = browser.find_element(By.ID, "summary").text
    assert summary, "no result shown"
    rows = browser.find_elements(By.CSS_SELECTOR, "#result-table tr")
    assert len(rows) == 3  # header + two seats
    log = browser.find_element(By.ID, "log").text
    assert "you: draw" in log and "seat 1 (heuristic:greedy):" in log  # the opponent's moves were shown
    assert "after 1 hand(s)" in browser.find_element(By.ID, "hands-played").text
    shot = Path(os.environ.get("TONK_SCREENSHOT_DIR", tmp_path)) / "tonk_browser_result.png"
    assert browser.save_screenshot(str(shot)) and shot.stat().st_size > 10_000

    # the next hand starts with the running score
    browser.find_element(By.ID, "next-hand").click()
    wait.until(
        lambda d: (
            not d.find_element(By.ID, "result").is_displayed()
            or "after 2 hand(s)" in d.find_element(By.ID, "hands-played").text
        )
    )
    assert browser.find_element(By.ID, "error").text == ""


def _seat_cards(browser: webdriver.Chrome, seat: int) -> tuple[list[str], int]:
    """The face-up cards (data-card) and the number of face-down cards in a seat's box of the replay."""
    box = browser.find_element(By.CSS_SELECTOR, f"#seats .seat[data-seat='{seat}']")
    up = [c.get_attribute("data-card") for c in box.find_elements(By.CSS_SELECTOR, ".card[data-card]")]
    return up, len(box.find_elements(By.CSS_SELECTOR, ".card.back"))


#: A wait reads the page again when a re-render replaced the element it was reading.
REREAD = (StaleElementReferenceException,)


def _at_step(browser: webdriver.Chrome, step: int) -> None:
    WebDriverWait(browser, 20, ignored_exceptions=REREAD).until(
        lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-step") == str(step)
    )


def test_replay_viewer_steps_through_recorded_hands(
    server_url: str, browser: webdriver.Chrome, tmp_path: Path
) -> None:
    import json
    import urllib.request

    from eval.duplicate import evaluate
    from frontends.replay import replay_frames

    records = evaluate(["heuristic:greedy", "random"], hands=2, seed=11, record=2).records
    path = tmp_path / "hands.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    frames = replay_frames(records[0], seat=0)["frames"]
    wait = WebDriverWait(browser, 20, ignored_exceptions=REREAD)
    browser.get(f"{server_url}/replay")
    wait.until(lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-ready") == "1")
    browser.find_element(By.ID, "file").send_keys(str(path))
    _at_step(browser, 0)
    assert browser.find_element(By.ID, "error").text == ""
    assert len(browser.find_elements(By.CSS_SELECTOR, "#hand-pick option")) == 2

    # forward: seat 0's cards face up, seat 1's face down but for the cards it is known to hold
    last = len(frames) - 1
    for i, f in enumerate(frames):
        if i:
            browser.find_element(By.ID, "forward").click()
            _at_step(browser, i)
        mine, _ = _seat_cards(browser, 0)
        theirs, backs = _seat_cards(browser, 1)
        if f["result"] is None:
            assert sorted(mine) == sorted(f["hand"])
            assert sorted(theirs) == sorted(f["known_cards"][1]), f"a hidden card shown at move {i}"
            assert backs == f["hand_sizes"][1] - len(f["known_cards"][1])
            assert not browser.find_element(By.ID, "result").is_displayed()
        else:  # the end: every hand face up
            assert i == last and backs == 0
            assert [mine, theirs] == f["result"]["hands"]
            assert browser.find_element(By.ID, "result").is_displayed()
    shot = Path(os.environ.get("TONK_SCREENSHOT_DIR", tmp_path)) / "tonk_replay_end.png"
    assert browser.save_screenshot(str(shot)) and shot.stat().st_size > 10_000
    browser.find_element(By.ID, "back").click()
    _at_step(browser, last - 1)
    assert _seat_cards(browser, 1)[1] == frames[-2]["hand_sizes"][1] - len(frames[-2]["known_cards"][1])
    browser.find_element(By.ID, "first").click()
    _at_step(browser, 0)
    assert "The deal" in browser.find_element(By.ID, "status").text

    # the view of every hand, and the second hand of the file
    Select(browser.find_element(By.ID, "view")).select_by_value("open")
    wait.until(lambda d: _seat_cards(d, 1)[1] == 0 and len(_seat_cards(d, 1)[0]) == 5)
    Select(browser.find_element(By.ID, "hand-pick")).select_by_value("1")
    wait.until(lambda d: "hand 2" in Select(d.find_element(By.ID, "hand-pick")).first_selected_option.text)
    assert browser.find_element(By.ID, "error").text == ""

    # a finished game of the server, opened by its id
    def post(path: str, body: dict) -> dict:
        req = urllib.request.Request(
            server_url + path, json.dumps(body).encode(), {"content-type": "application/json"}
        )
        with urllib.request.urlopen(req, timeout=20) as r:
            return json.loads(r.read())

    g = post("/api/games", {"agents": ["random"], "seed": 4})
    while g["view"]["result"] is None:
        g = post(f"/api/games/{g['game_id']}/actions", {"action": g["view"]["legal_actions"][-1]})
    browser.get(f"{server_url}/replay?game={g['game_id']}&seat=0")
    _at_step(browser, 0)
    browser.find_element(By.ID, "last").click()
    wait.until(lambda d: d.find_element(By.ID, "result").is_displayed())
    assert [_seat_cards(browser, p)[0] for p in (0, 1)] == g["view"]["result"]["hands"]
    assert browser.find_element(By.ID, "error").text == ""


def test_replay_viewer_names_a_broken_file(
    server_url: str, browser: webdriver.Chrome, tmp_path: Path
) -> None:
    bad = tmp_path / "broken.jsonl"
    bad.write_text('{"format": "tonk-record/1"}\nnot json\n')
    browser.get(f"{server_url}/replay")
    WebDriverWait(browser, 20).until(
        lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-ready") == "1"
    )
    browser.find_element(By.ID, "file").send_keys(str(bad))
    WebDriverWait(browser, 20).until(lambda d: d.find_element(By.ID, "error").text)
    assert "broken.jsonl: line 2 is not JSON" in browser.find_element(By.ID, "error").text
