"""Progress bars: drawn on a terminal; whole lines, now and then and at the end, in a log file."""

from __future__ import annotations

import io

from tqdm import tqdm

from tonk_env.progress import LogLines, progress_bar


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_log_file_gets_whole_lines_and_the_last_one() -> None:
    log = io.StringIO()
    with progress_bar(file=log, total=100, desc="train quick", unit="step", every_s=0.0) as bar:
        assert isinstance(bar, LogLines)
        for _ in range(4):
            bar.update(25)
        bar.set_postfix(loss=0.5)
    text = log.getvalue()
    assert "\r" not in text and "|" not in text  # no bar, no redraw
    lines = text.splitlines()
    assert any(line.startswith("train quick:  25% 25/100 step [") for line in lines)
    assert lines[-1].startswith("train quick: 100% 100/100 step [") and "loss=0.5" in lines[-1]
    assert len(lines) == len(set(lines))  # the end does not repeat the last line


def test_a_short_bar_in_a_log_file_is_one_line_at_its_end() -> None:
    log = io.StringIO()
    bar = progress_bar(file=log, total=10, desc="pretrain: fit", unit="epoch")  # 30 s between lines
    bar.update(10)
    assert log.getvalue() == ""
    bar.close()
    (line,) = log.getvalue().splitlines()
    assert line.startswith("pretrain: fit: 100% 10/10 epoch [")
    log = io.StringIO()
    with progress_bar(file=log, total=100, desc="train quick", unit="step") as bar:
        bar.update(128)  # training ends past its total, at the end of its last rollout
    assert log.getvalue().startswith("train quick: 100% 128/128 step ["), log.getvalue()
    log = io.StringIO()
    with progress_bar(file=log, desc="played", unit="hand") as bar:  # no total
        bar.update(3)
    assert log.getvalue().startswith("played: 3 hand [")


def test_a_terminal_gets_tqdm_s_bar_and_a_disabled_bar_writes_nothing() -> None:
    screen = _Terminal()
    with progress_bar(file=screen, total=4, desc="tonk eval", unit="hand") as bar:
        assert type(bar) is tqdm
        bar.update(4)
    assert "\r" in screen.getvalue()
    log = io.StringIO()
    with progress_bar(file=log, total=4, desc="exact", unit="hand", disable=True) as bar:
        bar.update(4)
    assert log.getvalue() == ""
