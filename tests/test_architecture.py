"""The house's import contracts (docs/ARCHITECTURE.md), checked on the source's import graph.

- Layers only import downward: ``tonk_env.engine`` -> ``tonk_env`` -> ``agents``
  -> (``eval``, ``train``: neither imports the other) -> ``frontends``, ``tonk_cli``.
- The engine imports nothing of ours above it and no third-party package but numpy.
- No import circles between modules, counting imports inside functions too.
- An import inside a function is only for an optional heavy dependency (or a
  platform module); never for a module of ours, except where listed below
  with the reason.
- The command line parses; the library works: the workflows
  (``tonk_cli/workflows/``) import no ``argparse`` and no command module, and a
  command module (``tonk_cli/*_cmd.py``) defines only ``register``, ``cmd_*``
  and private helpers, and imports no other command module.
- The RLlib backend (``train.rllib``) reaches no SB3 code: neither it nor any
  module of ours that it imports, directly or through others, imports
  ``stable_baselines3``, ``sb3_contrib`` or ``train.sb3``.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("tonk_env", "agents", "train", "eval", "frontends", "tonk_cli")

#: Layer of each package (a module may import its own package or a lower layer).
LAYERS = {
    "tonk_env.engine": 0,
    "tonk_env": 1,
    "agents": 2,
    "eval": 3,
    "train": 3,
    "frontends": 4,
    "tonk_cli": 5,
}
#: Pairs of packages of one layer that must not import each other.
INDEPENDENT = (("eval", "train"),)

#: Third-party packages that may be imported inside a function: optional extras and heavy plotting.
LAZY_THIRD_PARTY = {"ray", "onnx", "onnxruntime", "fastapi", "uvicorn", "pyspiel", "open_spiel", "matplotlib"}
#: Standard-library modules that only exist on some platforms.
PLATFORM_MODULES = {"fcntl", "msvcrt"}
#: Modules of ours that import modules of ours inside functions, and why.
LAZY_OWN = {
    # importing the engine must not import gymnasium/pettingzoo: `tonk_env.env` loads the AEC env on first use
    "tonk_env": "lazy env attribute",
    # backend: rllib imports train.rllib.run (and so Ray's RLlib, an optional extra) only when chosen
    "train.trainer": "optional RLlib backend",
}
#: The CLI imports each subcommand's modules when it runs, so `tonk rules` starts fast.
LAZY_OWN_PACKAGES = ("tonk_cli",)

ENGINE_THIRD_PARTY = {"numpy"}

#: The library layer of the command line: workflows callable from Python.
WORKFLOWS = "tonk_cli.workflows"
#: The command line's own modules besides the ``*_cmd`` ones: the entry point and the flag types.
CLI_MODULES = {"tonk_cli.main", "tonk_cli.args"}
#: The RLlib backend's package, and what neither it nor anything of ours it imports may import.
RLLIB_PACKAGE = "train.rllib"
SB3_ONLY = ("stable_baselines3", "sb3_contrib", "train.sb3")


def module_name(path: Path) -> str:
    """``tonk_env/engine/state.py`` -> ``tonk_env.engine.state`` (a package's ``__init__`` is the package)."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {
    module_name(p): p
    for pkg in PACKAGES
    for p in sorted((ROOT / pkg).rglob("*.py"))
    if "static" not in p.parts
}


def is_package(name: str) -> bool:
    """Whether module ``name`` is a package (an ``__init__.py``)."""
    return MODULES[name].name == "__init__.py"


def imports(name: str) -> Iterator[tuple[str, bool, int]]:
    """``(imported module, inside a function, line)`` for every import statement of module ``name``."""
    tree = ast.parse(MODULES[name].read_text(), str(MODULES[name]))
    package = name if is_package(name) else name.rpartition(".")[0]

    def walk(node: ast.AST, in_function: bool) -> Iterator[tuple[str, bool, int]]:
        for child in ast.iter_child_nodes(node):
            inner = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            if isinstance(child, ast.Import):
                for alias in child.names:
                    yield alias.name, inner, child.lineno
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    base = package.split(".")
                    base = base[: len(base) - child.level + 1]
                    target = ".".join(base + ([child.module] if child.module else []))
                else:
                    target = child.module or ""
                if target == "__future__":
                    continue
                for alias in child.names:
                    sub = f"{target}.{alias.name}"
                    yield (sub if sub in MODULES else target), inner, child.lineno
            else:
                yield from walk(child, inner)

    yield from walk(tree, False)


def own(target: str) -> str | None:
    """The module of ours that ``target`` names (or the nearest package of ours above it), else None."""
    while target and target not in MODULES:
        target = target.rpartition(".")[0]
    return target or None


def layer_of(name: str) -> tuple[str, int]:
    """The layer package and rank of module ``name``."""
    if name == "tonk_env.engine" or name.startswith("tonk_env.engine."):
        return "tonk_env.engine", LAYERS["tonk_env.engine"]
    top = name.split(".")[0]
    return top, LAYERS[top]


EDGES = {
    name: [(own(t), inner, line) for t, inner, line in imports(name) if own(t) is not None]
    for name in MODULES
}


def test_the_graph_covers_every_package() -> None:
    assert {n.split(".")[0] for n in MODULES} == set(PACKAGES)
    assert len(MODULES) > 50 and sum(len(v) for v in EDGES.values()) > 100


def test_layers_only_import_downward() -> None:
    bad = []
    for name, edges in EDGES.items():
        src, rank = layer_of(name)
        for target, _, line in edges:
            dst, trank = layer_of(target)  # type: ignore[arg-type]  # own() returned a module
            if dst == src:
                continue
            if trank >= rank or any({src, dst} == set(pair) for pair in INDEPENDENT):
                bad.append(
                    f"{MODULES[name].relative_to(ROOT)}:{line}: {name} ({src}) imports {target} ({dst})"
                )
    assert not bad, "imports against the layers:\n" + "\n".join(bad)


def test_the_engine_imports_no_rl_library() -> None:
    stdlib = sys.stdlib_module_names
    bad = []
    for name in MODULES:
        if layer_of(name)[0] != "tonk_env.engine":
            continue
        for target, _, line in imports(name):
            top = target.split(".")[0]
            if own(target) is None and top not in stdlib and top not in ENGINE_THIRD_PARTY:
                bad.append(f"{name}:{line} imports {target}")
    assert not bad, bad


def _is_under(target: str, packages: tuple[str, ...]) -> bool:
    return any(target == p or target.startswith(p + ".") for p in packages)


def test_the_rllib_backend_reaches_no_sb3_code() -> None:
    start = [n for n in MODULES if _is_under(n, (RLLIB_PACKAGE,))]
    assert start, f"no modules under {RLLIB_PACKAGE}"
    via: dict[str, str] = {n: n for n in start}  # module -> the train.rllib module that reaches it
    todo = list(start)
    while todo:
        name = todo.pop()
        for target, _, _ in EDGES[name]:
            if target is not None and target not in via:
                via[target] = via[name]
                todo.append(target)
    bad = [
        f"{MODULES[name].relative_to(ROOT)}:{line}: {name} imports {target} (reached from {via[name]})"
        for name in sorted(via)
        for target, _, line in imports(name)
        if _is_under(target, SB3_ONLY)
    ]
    assert not bad, "the RLlib backend reaches SB3 code:\n" + "\n".join(bad)


def _cycles() -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan), or a module importing itself."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    counter = [0]
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w, _, _ in EDGES[v]:
            if w == v:
                continue
            if w not in index:
                visit(w)  # type: ignore[arg-type]  # own() returned a module
                low[v] = min(low[v], low[w])  # type: ignore[index]
            elif w in on_stack:
                low[v] = min(low[v], index[w])  # type: ignore[index]
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in MODULES:
        if v not in index:
            visit(v)
    return out


def test_no_import_circles() -> None:
    cycles = _cycles()
    assert not cycles, "modules that import each other (directly or around a circle):\n" + "\n".join(
        " <-> ".join(c) for c in cycles
    )


def test_imports_inside_functions_are_only_for_optional_dependencies() -> None:
    bad = []
    for name in MODULES:
        if name in LAZY_OWN or name.split(".")[0] in LAZY_OWN_PACKAGES:
            continue
        for target, inner, line in imports(name):
            if not inner:
                continue
            top = target.split(".")[0]
            if own(target) is not None or top not in LAZY_THIRD_PARTY | PLATFORM_MODULES:
                bad.append(f"{MODULES[name].relative_to(ROOT)}:{line}: import {target} inside a function")
    assert not bad, "imports inside functions (move them to the top of the module):\n" + "\n".join(bad)


def is_command_module(name: str) -> bool:
    """Whether module ``name`` is a ``tonk`` subcommand module (``tonk_cli/*_cmd.py``)."""
    return name.startswith("tonk_cli.") and name.count(".") == 1 and name.endswith("_cmd")


def test_workflows_import_no_argparse_and_no_command_module() -> None:
    bad = []
    for name in MODULES:
        if name != WORKFLOWS and not name.startswith(WORKFLOWS + "."):
            continue
        for target, _, line in imports(name):
            mine = own(target)
            if target.split(".")[0] == "argparse" or (
                mine is not None and (is_command_module(mine) or mine in CLI_MODULES)
            ):
                bad.append(f"{MODULES[name].relative_to(ROOT)}:{line}: {name} imports {target}")
    assert not bad, "workflows that depend on the command line:\n" + "\n".join(bad)


def test_command_modules_only_parse_and_call() -> None:
    """A public function or class in a command module is library work: it belongs in a workflow."""
    bad = []
    for name in MODULES:
        if not is_command_module(name):
            continue
        where = MODULES[name].relative_to(ROOT)
        for node in ast.parse(MODULES[name].read_text(), str(where)).body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                if node.name != "register" and not node.name.startswith(("cmd_", "_")):
                    bad.append(f"{where}:{node.lineno}: {name} defines {node.name}")
        for target, _, line in imports(name):
            mine = own(target)
            if mine is not None and mine != name and is_command_module(mine):
                bad.append(f"{where}:{line}: {name} imports the command module {mine}")
    assert not bad, "workflow logic in the command modules (move it to tonk_cli/workflows/):\n" + "\n".join(
        bad
    )


# Every planted module has a name of its own: xdist may run two cases at once in the same tree.
@pytest.mark.parametrize(
    ("source", "name"),
    [
        ("import train.trainer\n", "eval._planted"),  # eval imports train
        ("from agents import registry\n", "tonk_env.engine._planted"),  # the engine imports an agent
        ("def f():\n    import json\n", "agents._planted"),  # a stdlib import inside a function
        ("import argparse\n", "tonk_cli.workflows._planted"),  # a workflow parses flags
        ("from tonk_cli import zoo_cmd\n", "tonk_cli.workflows._planted_b"),  # a workflow calls a command
        ("def run_thing() -> None:\n    pass\n", "tonk_cli._planted_cmd"),  # a workflow in a command module
        ("from tonk_cli import zoo_cmd\n", "tonk_cli._planted_b_cmd"),  # a command calls another's logic
        ("import sb3_contrib\n", "train.rllib._planted"),  # the RLlib backend imports SB3 code
        ("from train.sb3 import callback\n", "train.rllib._planted_b"),  # ... or the SB3 backend
    ],
)
def test_the_checks_catch_a_planted_violation(source: str, name: str, tmp_path: Path) -> None:
    """Each check fails on a module that breaks its rule (so none of them passes vacuously)."""
    path = ROOT / Path(*name.split(".")).with_suffix(".py")
    MODULES[name] = path
    path.write_text(source)
    try:
        EDGES[name] = [(own(t), inner, line) for t, inner, line in imports(name) if own(t) is not None]
        checks = (
            test_layers_only_import_downward,
            test_imports_inside_functions_are_only_for_optional_dependencies,
            test_workflows_import_no_argparse_and_no_command_module,
            test_command_modules_only_parse_and_call,
            test_the_rllib_backend_reaches_no_sb3_code,
        )
        failed = 0
        for check in checks:
            try:
                check()
            except AssertionError as e:
                failed += "_planted" in str(e)
        assert failed >= 1
    finally:
        path.unlink()
        MODULES.pop(name)
        EDGES.pop(name)


def test_the_sb3_check_follows_imports_through_other_modules() -> None:
    """A ``train.rllib`` module that imports a module of ours importing ``train.sb3`` fails the check."""
    planted = {
        "train._planted_helper": "from train.sb3.policy import TonkMaskablePolicy\n",
        "train.rllib._planted_via": "from train import _planted_helper\n",
    }
    for name, source in planted.items():
        MODULES[name] = ROOT / Path(*name.split(".")).with_suffix(".py")
        MODULES[name].write_text(source)
    try:
        for name in planted:
            EDGES[name] = [(own(t), inner, line) for t, inner, line in imports(name) if own(t) is not None]
        with pytest.raises(AssertionError, match="reached from train.rllib._planted_via"):
            test_the_rllib_backend_reaches_no_sb3_code()
    finally:
        for name in planted:
            MODULES.pop(name).unlink()
            EDGES.pop(name, None)


#: A module longer than this holds more than one concept: split it.
MAX_MODULE_LINES = 700
#: A function longer than this does more than one thing: cut it into named steps.
MAX_FUNCTION_LINES = 80
#: Modules (``pkg.mod``) and functions (``pkg.mod:Class.func``) allowed past the limits, each with why.
SIZE_ALLOWED: dict[str, str] = {}


def size_problems(modules: dict[str, Path]) -> list[str]:
    """Every module over :data:`MAX_MODULE_LINES` and function over :data:`MAX_FUNCTION_LINES` lines."""
    bad = []
    for name, path in modules.items():
        text = path.read_text()
        where = path.relative_to(ROOT)
        lines = len(text.splitlines())
        if lines > MAX_MODULE_LINES and name not in SIZE_ALLOWED:
            bad.append(f"{where}: {lines} lines (at most {MAX_MODULE_LINES})")
        for qual, node in _functions(ast.parse(text, str(where)), ""):
            length = (node.end_lineno or node.lineno) - node.lineno + 1
            if length > MAX_FUNCTION_LINES and f"{name}:{qual}" not in SIZE_ALLOWED:
                bad.append(f"{where}:{node.lineno}: {qual} is {length} lines (at most {MAX_FUNCTION_LINES})")
    return bad


def _functions(node: ast.AST, prefix: str) -> Iterator[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    """Every function under ``node`` with its dotted name (``Class.method``, ``outer.inner``)."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield prefix + child.name, child
            yield from _functions(child, f"{prefix}{child.name}.")
        elif isinstance(child, ast.ClassDef):
            yield from _functions(child, f"{prefix}{child.name}.")


def test_modules_and_functions_stay_small() -> None:
    bad = size_problems(MODULES)
    assert not bad, "too long (split by concept, or list it in SIZE_ALLOWED with the reason):\n" + "\n".join(
        bad
    )
    stale = [k for k in SIZE_ALLOWED if k.split(":")[0] not in MODULES]
    assert not stale, f"SIZE_ALLOWED names modules that do not exist: {stale}"


def test_the_size_check_catches_a_long_module_and_a_long_function() -> None:
    body = "".join(f"        x{i} = {i}\n" for i in range(MAX_FUNCTION_LINES))
    planted = {
        "tonk_env._planted_f": f"class C:\n    def f(self) -> None:\n{body}",  # 81 lines
        "tonk_env._planted_m": "".join(f"y{i} = {i}\n" for i in range(MAX_MODULE_LINES + 1)),
    }
    found = []
    for name, source in planted.items():
        path = ROOT / Path(*name.split(".")).with_suffix(".py")
        path.write_text(source)
        try:
            found += size_problems({name: path})
        finally:
            path.unlink()
    assert found == [
        f"tonk_env/_planted_f.py:2: C.f is {MAX_FUNCTION_LINES + 1} lines (at most {MAX_FUNCTION_LINES})",
        f"tonk_env/_planted_m.py: {MAX_MODULE_LINES + 1} lines (at most {MAX_MODULE_LINES})",
    ]
