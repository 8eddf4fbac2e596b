"""Progress bars that suit where they are written: a terminal gets a tqdm bar, a log file gets lines.

tqdm redraws its bar with carriage returns, which a terminal overwrites and a
file keeps: ``tonk train ... 2> log`` used to fill the log with thousands of
half-lines. :func:`progress_bar` returns a plain tqdm bar when its stream is a
terminal. Elsewhere it returns a :class:`LogLines`, the same tqdm object that
writes a whole line (no bar, no carriage return) once every :data:`EVERY_S`
seconds and when it closes, so a redirected run still says how far it got.
"""

from __future__ import annotations

import sys
import time
from typing import IO, Any

from tqdm import tqdm

#: Seconds between two lines of a bar written to a file or a pipe.
EVERY_S = 30.0

_LINE = "{desc}: {percentage:3.0f}% {n_fmt}/{total_fmt} {unit} [{elapsed}<{remaining}, {rate_fmt}{postfix}]"
_LINE_NO_TOTAL = "{desc}: {n_fmt} {unit} [{elapsed}, {rate_fmt}{postfix}]"


class LogLines(tqdm):  # type: ignore[type-arg]
    """A tqdm bar for a stream that is not a terminal: a line every ``every_s`` seconds and one at the end."""

    def __init__(self, *args: Any, every_s: float = EVERY_S, **kwargs: Any) -> None:
        self._every_s = every_s
        self._last_line = time.monotonic()
        self._lined_n: float | None = None
        total = kwargs.get("total")
        kwargs.update(
            leave=False,  # tqdm's own last redraw: close() writes the last line instead
            dynamic_ncols=False,
            ncols=None,
            mininterval=min(every_s, kwargs.get("mininterval", 0.1)),
            bar_format=_LINE if total else _LINE_NO_TOTAL,
        )
        super().__init__(*args, **kwargs)

    def display(self, msg: str | None = None, pos: int | None = None) -> bool:
        """Write the state as one line if ``every_s`` seconds have passed since the last (tqdm's redraw)."""
        if msg == "":  # tqdm clearing its bar: a log has nothing to clear
            return False
        if time.monotonic() - self._last_line >= self._every_s:
            self._write_line(msg)
        return True

    def close(self) -> None:
        """Write the last line (unless the last one said the same), then close."""
        if not self.disable and self._lined_n != self.n:
            self._write_line(None)
        super().close()

    def _write_line(self, msg: str | None) -> None:
        total = getattr(self, "total", None)  # tqdm's attribute (untyped)
        if total and self.n > total:  # a run that ends past its total (a whole last rollout)
            self.total = self.n  # reads 100% n/n, not tqdm's "0% n/?"
        self.fp.write((str(self) if msg is None else msg).strip() + "\n")
        self.fp.flush()
        self._last_line = time.monotonic()
        self._lined_n = self.n


def progress_bar(*, file: IO[str] | None = None, every_s: float = EVERY_S, **kwargs: Any) -> tqdm:  # type: ignore[type-arg]
    """A tqdm bar on ``file`` (stderr by default): drawn on a terminal, a line now and then elsewhere."""
    stream = sys.stderr if file is None else file
    isatty = getattr(stream, "isatty", None)
    if kwargs.get("disable") or (isatty is not None and isatty()):
        return tqdm(file=stream, **kwargs)
    return LogLines(file=stream, every_s=every_s, **kwargs)
