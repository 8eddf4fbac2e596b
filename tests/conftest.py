"""Every test starts with torch on one thread.

pytest runs one worker a core (``make test``); two threads a worker on two cores
make each small matrix product wait for the other worker's (a fit of seconds
takes a minute). ``OMP_NUM_THREADS`` sets torch's threads where it is first
imported, in this process and in the processes tests start; a test that trains
sets them for its whole worker process, so each test starts again at one. A
test that needs more threads sets them itself.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator

import pytest

os.environ.setdefault("OMP_NUM_THREADS", "1")


@pytest.fixture(autouse=True)
def _one_torch_thread() -> Iterator[None]:
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(1)
    yield
