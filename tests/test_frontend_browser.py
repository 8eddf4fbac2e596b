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
from selenium.common.exceptions import WebDriverException
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
