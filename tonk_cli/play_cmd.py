"""``tonk play`` (the terminal game), ``tonk serve`` (HTTP API and browser game), ``tonk export``.

Heavy imports (FastAPI, uvicorn, onnx) stay inside the command functions;
errors are ``ValueError`` (``tonk play: error: ...``, exit status 2).
"""

from __future__ import annotations

import argparse

from . import args as _args

_PRESETS_HELP = "rules preset (standard, hit_penalty, full_waiting, seven_card, low_tonk, no_upcard)"


def cmd_play(args: argparse.Namespace) -> int:
    """Play hands against agents in the terminal."""
    import sys

    from agents.peek import refuse_peek
    from frontends.terminal import play_terminal
    from tonk_env.engine import make_rules, parse_assignments

    rules = make_rules(args.rules, **parse_assignments(args.set or []))
    opponents = args.opponents or ["heuristic:expert"]
    refuse_peek(opponents, "the terminal game")
    players = args.players if args.players is not None else max(2, len(opponents) + 1)
    play_terminal(
        sys.stdin,
        sys.stdout,
        rules,
        players=players,
        opponents=opponents,
        seat=args.seat,
        hands=None if args.hands == 0 else args.hands,
        seed=args.seed,
    )
    return 0


def _port(text: str) -> int:
    """A TCP port number for argparse (a clear message, not a traceback, for 99999)."""
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{port} is not a port number (0..65535)")
    return port


def cmd_serve(args: argparse.Namespace) -> int:
    """Serve the HTTP/JSON API and the browser game."""
    try:
        from frontends.server import Limits, serve
    except ModuleNotFoundError as e:
        if (e.name or "").split(".")[0] not in ("fastapi", "starlette", "pydantic", "uvicorn"):
            raise
        raise ValueError(f"tonk serve needs FastAPI and uvicorn ({e}): pip install fastapi uvicorn") from None
    if args.host not in ("127.0.0.1", "localhost", "::1"):
        import sys

        print(
            f"tonk serve: warning: listening on {args.host}, not only this machine; anyone who can reach "
            "it can play and make the agents compute",
            file=sys.stderr,
        )
    limits = Limits(
        max_budget=args.max_budget,
        max_samples=args.max_samples,
        max_candidates=args.max_candidates,
        max_body=args.max_body,
        max_seconds=args.max_seconds,
        workers=args.workers,
        max_queue=args.max_queue,
        max_client_work=args.max_client_work,
        max_client_games=args.max_client_games,
        header_seconds=args.header_seconds,
        body_seconds=args.body_seconds,
    )
    serve(
        args.host,
        args.port,
        args.agents or [],
        max_games=args.max_games,
        idle_timeout=args.idle_timeout,
        limits=limits,
        allowed_hosts=args.allowed_hosts or [],
    )
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    """Export a policy network agent (ppo:/npz:) to ONNX or .npz."""
    from frontends.onnx_export import export_npz, export_onnx

    out = (export_onnx if args.format == "onnx" else export_npz)(args.agent, args.out)
    print(f"wrote {out}/model.{args.format} and {out}/meta.json")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``play``, ``serve`` and ``export`` to the ``tonk`` command line."""
    _register_play(sub)
    _register_serve(sub)
    _register_export(sub)


def _register_play(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "play",
        help="play Tonk against agents in the terminal",
        description="Play hands of Tonk against agents. Type a move's number, or an action such as "
        "'draw', 'x 4S' (discard), 's 3H 4H 5H' (spread), 'h 9H on 8H' (hit); 'help' lists them.",
    )
    p.add_argument(
        "--players",
        type=_args.players,
        default=None,
        help="seats at the table, 2..6 (default: one more than the opponents given, at least 2)",
    )
    p.add_argument("--rules", default="standard", metavar="PRESET", help=_PRESETS_HELP)
    p.add_argument(
        "--set",
        action="append",
        metavar="OPTION=VALUE",
        help="change one rules option (repeatable), e.g. --set hit_wait=1",
    )
    p.add_argument(
        "--opponents",
        nargs="+",
        metavar="SPEC",
        help="agent specs for the other seats, cycled to fill them (default: heuristic:expert)",
    )
    p.add_argument(
        "--seat", type=_args.count(0, 5), default=0, help="your seat (seat 0 plays first in the first hand)"
    )
    p.add_argument(
        "--hands", type=_args.count(0, _args.MAX_HANDS), default=1, help="hands to play (0: until you quit)"
    )
    p.add_argument(
        "--seed", type=_args.seed, default=None, help="seed of the deals and the agents (default: random)"
    )
    p.set_defaults(func=cmd_play)


def _register_serve(sub: argparse._SubParsersAction) -> None:
    s = sub.add_parser(
        "serve",
        help="serve the HTTP/JSON API and the browser game (FastAPI + uvicorn)",
        description="Serve Tonk over HTTP: the browser game at /, the JSON API under /api "
        "(schema at /openapi.json, docs at /docs). See docs/FRONTENDS.md.",
    )
    s.add_argument("--host", default="127.0.0.1", help="address to listen on (default: this machine only)")
    s.add_argument("--port", type=_port, default=8000, help="TCP port 0..65535 (default 8000)")
    s.add_argument(
        "--agents",
        nargs="+",
        metavar="SPEC",
        help="agent specs to offer; file agents (ppo:PATH, npz:PATH, onnx:DIR) are loaded only "
        "from the paths listed here",
    )
    s.add_argument("--max-games", type=int, default=100, help="live games at most")
    s.add_argument("--max-budget", type=int, default=1000, metavar="N", help="search:ismcts budget at most")
    s.add_argument(
        "--max-samples",
        type=int,
        default=2000,
        metavar="N",
        help="search:ismcts drop_samples and heuristic:expert samples at most",
    )
    s.add_argument(
        "--max-candidates", type=int, default=3, metavar="N", help="search:ismcts candidates at most"
    )
    s.add_argument("--max-body", type=int, default=65536, metavar="BYTES", help="request body size at most")
    s.add_argument(
        "--max-seconds",
        type=float,
        default=10.0,
        metavar="S",
        help="seconds a request that makes agents work may take from its arrival, its wait for a worker "
        "included; a search past it stops and the request gets a 503 (nothing changed)",
    )
    s.add_argument(
        "--workers", type=int, default=2, metavar="N", help="threads that run the agents' work (default 2)"
    )
    s.add_argument(
        "--max-queue",
        type=int,
        default=32,
        metavar="N",
        help="requests waiting for an agent worker at most; above: 503 with Retry-After (default 32)",
    )
    s.add_argument(
        "--max-client-work",
        type=int,
        default=4,
        metavar="N",
        help="one client's requests queued or running at most; above: 429 with Retry-After (default 4)",
    )
    s.add_argument(
        "--max-client-games",
        type=int,
        default=20,
        metavar="N",
        help="one client's live games at most; above: 429 (default 20)",
    )
    s.add_argument(
        "--header-seconds",
        type=float,
        default=5.0,
        metavar="S",
        help="seconds a connection may take to send a request's headers; past it, it is closed (default 5)",
    )
    s.add_argument(
        "--body-seconds",
        type=float,
        default=10.0,
        metavar="S",
        help="seconds a request may take to send its body; past it: 408 and closed (default 10)",
    )
    s.add_argument(
        "--allowed-hosts",
        nargs="+",
        metavar="HOST",
        help="Host header names accepted besides IP addresses, localhost and (for a 0.0.0.0 or :: bind) "
        "this machine's name; '*.example.org' matches subdomains, '*' any (no DNS-rebinding guard)",
    )
    s.add_argument(
        "--idle-timeout",
        type=float,
        default=3600.0,
        metavar="S",
        help="seconds after which an unused game is dropped",
    )
    s.set_defaults(func=cmd_serve)


def _register_export(sub: argparse._SubParsersAction) -> None:
    x = sub.add_parser(
        "export",
        help="export a policy network agent (ppo:PATH, npz:PATH) to ONNX",
        description="Write DIR/model.onnx (inputs observation, action_mask; outputs masked_logits, action) "
        "and DIR/meta.json; play it back with the onnx:DIR agent (onnxruntime, no torch).",
    )
    x.add_argument("agent", metavar="AGENT_SPEC", help="ppo:RUN_OR_ZIP or npz:FILE")
    x.add_argument("--format", choices=["onnx", "npz"], default="onnx")
    x.add_argument("--out", required=True, metavar="DIR", help="output folder (created)")
    x.set_defaults(func=cmd_export)
