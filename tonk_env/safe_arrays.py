"""Reading arrays from a user's files with their size checked before anything is decompressed.

Every ``.npz`` and zip that Tonk RL reads from a path a user gives (``npz:``
and ``zoo:`` agents, run checkpoints, tournament entrants, ``tonk serve
--agents``, RLlib checkpoints) goes through here. A small compressed file can
hold a huge array (a decompression bomb); so, before decompressing:

- each zip member's declared size (``file_size`` in the zip directory, which
  ``zipfile`` also enforces while reading) must be at most ``MAX_MEMBER_BYTES``
  and their sum at most ``MAX_FILE_BYTES``;
- each ``.npy`` member's header is read first (a few hundred bytes), and its
  shape times its dtype's item size must be at most ``MAX_MEMBER_BYTES``;
  object arrays are refused (they would need pickle).

A refusal is a one-line ``ValueError`` naming the file, the member, its size
and the limit.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import sys
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

import numpy as np

#: The largest array (or zip member) read from a user's file: far above any Tonk RL network.
MAX_MEMBER_BYTES = 64 * 2**20
#: The largest total of a file's decompressed members.
MAX_FILE_BYTES = 256 * 2**20
#: The longest ``.npy`` header read (numpy's own default limit).
_MAX_HEADER = 10_000


def _mib(n: int) -> str:
    return f"{n / 2**20:,.1f} MiB"


def check_zip_sizes(
    z: zipfile.ZipFile, where: str, member_limit: int = MAX_MEMBER_BYTES, file_limit: int = MAX_FILE_BYTES
) -> None:
    """Refuse a zip whose members would decompress past the limits (read from its directory only)."""
    total = 0
    for info in z.infolist():
        if info.file_size > member_limit:
            raise ValueError(
                f"{where}: member {info.filename} would decompress to {_mib(info.file_size)}, over the "
                f"limit of {_mib(member_limit)} per array; refused before decompressing"
            )
        total += info.file_size
    if total > file_limit:
        raise ValueError(
            f"{where}: its members would decompress to {_mib(total)}, over the limit of "
            f"{_mib(file_limit)} per file; refused before decompressing"
        )


def read_member(z: zipfile.ZipFile, name: str, where: str, limit: int = MAX_MEMBER_BYTES) -> bytes:
    """One zip member's bytes, its declared size checked against ``limit`` first (``KeyError`` if absent)."""
    info = z.getinfo(name)
    if info.file_size > limit:
        raise ValueError(
            f"{where}: member {name} would decompress to {_mib(info.file_size)}, over the limit of "
            f"{_mib(limit)}; refused before decompressing"
        )
    return z.read(info)


def npy_nbytes(f: IO[bytes], where: str) -> int:
    """The size an ``.npy`` stream's array would take, from its header alone (object arrays refused)."""
    try:
        version = np.lib.format.read_magic(f)
        if version not in ((1, 0), (2, 0), (3, 0)):
            raise ValueError(f"format version {version} is not supported")
        fmt = np.lib.format
        read = fmt.read_array_header_1_0 if version == (1, 0) else fmt.read_array_header_2_0
        shape, _, dtype = read(f, max_header_size=_MAX_HEADER)
    except Exception as e:  # a damaged header fails in numpy's parser: ValueError, SyntaxError, TokenError...
        why = str(e).splitlines()[0][:120] if str(e) else type(e).__name__
        raise ValueError(f"{where}: a damaged .npy header ({why})") from None
    if dtype.hasobject:
        raise ValueError(f"{where}: holds Python objects (pickled data); refused")
    return math.prod(int(d) for d in shape) * dtype.itemsize


def load_npz(
    path: Path, member_limit: int = MAX_MEMBER_BYTES, file_limit: int = MAX_FILE_BYTES
) -> dict[str, Any]:
    """Every array of an ``.npz`` file, each size checked from its header before it is decompressed.

    ``ValueError`` names the file: missing, not an ``.npz``, damaged, an
    object array, or an array (or all of them) over the limits.
    """
    where = str(path)
    if not path.is_file():
        raise ValueError(f"{where}: {'not a file' if path.exists() else 'no such file'}")
    if not zipfile.is_zipfile(path):
        with path.open("rb") as f:
            single = f.read(6) == b"\x93NUMPY"
        raise ValueError(
            f"{where}: a single .npy array, not an .npz archive"
            if single
            else f"{where}: not a readable .npz file (not a zip archive, or a damaged one)"
        )
    try:
        with zipfile.ZipFile(path) as z:
            check_zip_sizes(z, where, member_limit, file_limit)
            total = 0
            for info in z.infolist():
                if not info.filename.endswith(".npy"):
                    continue
                with z.open(info) as f:
                    size = npy_nbytes(f, f"{where}: array {info.filename[:-4]}")
                if size > member_limit:
                    raise ValueError(
                        f"{where}: array {info.filename[:-4]} would take {_mib(size)}, over the limit of "
                        f"{_mib(member_limit)} per array; refused before decompressing"
                    )
                total += size
            if total > file_limit:
                raise ValueError(
                    f"{where}: its arrays would take {_mib(total)}, over the limit of {_mib(file_limit)} "
                    "per file; refused before decompressing"
                )
    except zipfile.BadZipFile as e:
        raise ValueError(f"{where}: not a readable .npz file (BadZipFile: {e})") from None
    except (OSError, EOFError, RuntimeError) as e:
        raise ValueError(f"{where}: not a readable .npz file ({type(e).__name__}: {e})") from None
    try:
        with np.load(path, allow_pickle=False) as data:
            return {k: data[k] for k in data.files}
    except Exception as e:  # a corrupt member fails in zipfile, zlib or numpy's header parser
        raise ValueError(f"{where}: not a readable .npz file ({type(e).__name__}: {e})") from None


def sha256_of(path: Path) -> str:
    """The SHA-256 of a file's bytes, in hex."""
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


#: Files already warned about (the warning is said once per file and process).
_WARNED: set[str] = set()
_HEX64 = re.compile(r"[0-9a-fA-F]{64}")


def expected_sha256(path: Path) -> tuple[str, Path] | None:
    """The SHA-256 a file's companion promises, and the companion: ``FILE.sha256`` or a card ``FILE.json``.

    The sidecar holds the hex digest (``sha256sum``'s line works too); the
    card is a JSON object with a ``sha256`` entry (as zoo cards have). None
    when the file has neither; ``ValueError`` when one is there but unreadable.
    """
    side = path.with_name(path.name + ".sha256")
    if side.is_file():
        words = side.read_text(encoding="utf-8", errors="replace")[:1000].split()
        if not words or not _HEX64.fullmatch(words[0]):
            raise ValueError(f"{side}: expected a SHA-256 in hex (64 digits), as sha256sum writes it")
        return words[0].lower(), side
    card = path.with_suffix(".json")
    if card.is_file() and card.stat().st_size <= 2**20:
        try:
            data = json.loads(card.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError):
            return None  # a JSON file of another kind beside it: not a card
        digest = data.get("sha256") if isinstance(data, dict) else None
        if isinstance(digest, str) and _HEX64.fullmatch(digest):
            return digest.lower(), card
    return None


def check_file_hash(path: Path, what: str, warn: Callable[[str], None] | None = None) -> bool:
    """Check a file against the SHA-256 of its sidecar or card; warn (one line, once) when it has none.

    Returns whether a hash was checked; ``ValueError`` names both files when it differs.
    """
    if not path.is_file():
        return False  # the loader says what is wrong with the path
    found = expected_sha256(path)
    if found is None:
        if str(path) not in _WARNED:
            _WARNED.add(str(path))
            (warn or _stderr)(
                f"warning: {what}: no {path.name}.sha256 or card beside it; its contents are not checked"
            )
        return False
    digest, source = found
    actual = sha256_of(path)
    if actual != digest:
        raise ValueError(
            f"{what}: {path} has SHA-256 {actual[:16]}..., {source.name} says {digest[:16]}...; "
            "the file was changed (or the hash is stale): refused"
        )
    return True


def _stderr(text: str) -> None:
    print(f"tonk: {text}", file=sys.stderr, flush=True)


def check_torch_file(path: Path) -> None:
    """Refuse a ``torch.save`` file (a zip) whose members would pass the size limits (missing: no check)."""
    if not path.is_file():
        return
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as z:
            check_zip_sizes(z, str(path))
    elif path.stat().st_size > MAX_FILE_BYTES:
        raise ValueError(f"{path}: {_mib(path.stat().st_size)}, over the limit of {_mib(MAX_FILE_BYTES)}")


def write_sha256_sidecar(path: Path) -> Path:
    """Write ``FILE.sha256`` (``sha256sum``'s line) beside ``path``: loaders check the file against it."""
    side = path.with_name(path.name + ".sha256")
    side.write_text(f"{sha256_of(path)}  {path.name}\n", encoding="utf-8")
    return side
