"""tonk_env.runtime: the utilities evaluation and training share (worker cap, atomic files, Ray start-up)."""

from __future__ import annotations

import json
import re
import socket
from pathlib import Path

import pytest

from tonk_env.runtime import MAX_WORKERS, append_jsonl, check_address, write_atomic, write_json

ROOT = Path(__file__).resolve().parents[1]


def test_write_json_replaces_the_file_whole_and_leaves_no_temporary(tmp_path: Path) -> None:
    path = tmp_path / "a.json"
    write_atomic(path, "old")
    write_json(path, {"b": [1, 2]}, end="\n")
    assert path.read_text() == '{\n "b": [\n  1,\n  2\n ]\n}\n'
    write_json(path, {"b": 1}, indent=None, separators=(",", ":"))
    assert path.read_text() == '{"b":1}'
    assert [p.name for p in tmp_path.iterdir()] == ["a.json"]


def test_append_jsonl_appends_lines_and_returns_what_it_wrote(tmp_path: Path) -> None:
    path = tmp_path / "m.jsonl"
    assert append_jsonl(path, {"a": 1}) == '{"a": 1}'
    assert append_jsonl(path, {"a": 2}, compact=True, sync=True) == '{"a":2}'
    assert [json.loads(x) for x in path.read_text().splitlines()] == [{"a": 1}, {"a": 2}]


def test_an_address_nobody_answers_is_one_line_naming_the_setting() -> None:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(
        ValueError, match=rf"cannot reach a Ray cluster at 127.0.0.1:{port} .* leave --address"
    ):
        check_address(f"127.0.0.1:{port}", "--address", timeout=1.0)
    with pytest.raises(ValueError, match="leave rllib.address empty"):
        check_address(f"ray://127.0.0.1:{port}", "rllib.address", timeout=1.0)
    check_address("", "--address")  # empty: a local Ray; auto: Ray's own search
    check_address("auto", "--address")


def test_the_worker_cap_is_defined_once() -> None:
    """Every package reads ``MAX_WORKERS`` from here; no module assigns its own."""
    assigned = [
        str(p.relative_to(ROOT))
        for pkg in ("tonk_env", "agents", "train", "eval", "frontends", "tonk_cli")
        for p in sorted((ROOT / pkg).rglob("*.py"))
        if re.search(r"^\s*MAX_WORKERS\s*(:[^=]*)?=", p.read_text(), re.M)
    ]
    assert assigned == ["tonk_env/runtime.py"] and MAX_WORKERS == 256
