"""``tonk``: the command line of Tonk RL.

Each subcommand parses its arguments and calls one library function; the
heavy imports happen inside the subcommand so ``tonk rules`` stays fast.
"""

from __future__ import annotations

import argparse
import importlib
import os
import select
import signal
import sys
import threading
from collections.abc import Sequence

from tonk_env.engine import GameState, SeatInfo, TonkRules, make_rules, parse_assignments
from tonk_env.workers import WorkerDiedError

from . import args as _args


def _rules_from_args(args: argparse.Namespace) -> TonkRules:
    """The rules of ``--rules PRESET`` with each ``--set option=value``."""

    return make_rules(args.rules, **parse_assignments(args.set or []))


def _add_rules_args(p: argparse.ArgumentParser, flag: str = "--rules") -> None:
    p.add_argument(
        flag,
        dest="rules",
        default="standard",
        metavar="PRESET",
        help="rules preset (standard, hit_penalty, full_waiting, seven_card, low_tonk, no_upcard)",
    )
    p.add_argument(
        "--set",
        action="append",
        metavar="OPTION=VALUE",
        help="change one rules option (repeatable), e.g. --set hit_wait=1",
    )


def cmd_rules(args: argparse.Namespace) -> int:
    """Print the resolved rules, their hash and optionally the action table layout."""
    from tonk_env.engine import action_table

    rules = _rules_from_args(args)
    print(f"rules preset {args.rules!r}, hash {rules.hash}")
    for name, value in rules.to_dict().items():
        print(f"  {name:20s} {value}")
    if args.actions:
        t = action_table(rules.ace_high)
        print(f"action table: {t.size} actions")
        for block, first, count in t.layout():
            print(f"  {block:14s} ids {first:3d}..{first + count - 1:3d}  ({count})  e.g. {t.name(first)!r}")
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    """Play one hand between random players and show it."""
    import random

    from tonk_env.agent import FunctionAgent
    from tonk_env.engine import action_to_string, new_game, render
    from tonk_env.play import play

    rules = _rules_from_args(args)
    rng = random.Random(args.seed)

    def random_but_rarely_drop(obs: object, info: SeatInfo) -> int:
        """Random, but drop only rarely so the demo shows some play."""
        legal = list(info.legal)
        choices = [a for a in legal if a != 0] if rng.random() > 0.05 else legal
        return rng.choice(choices or legal)

    def show(state: GameState, action: int) -> None:
        print(f"seat {state.cur}: {action_to_string(state, action)}")

    s = new_game(rules, args.players, seed=args.seed)
    print(f"One hand of Tonk between {args.players} random players (rules {args.rules}, seed {args.seed})\n")
    print(render(s))
    play(s, [FunctionAgent(random_but_rarely_drop)] * args.players, on_move=show)
    print()
    print(render(s))
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``tonk``."""
    p = argparse.ArgumentParser(
        prog="tonk", description="Tonk RL: environments, agents and training for Tonk."
    )
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    r = sub.add_parser("rules", help="print a resolved ruleset, its hash and the action table")
    r.add_argument("--preset", dest="rules", default="standard", metavar="NAME", help="rules preset")
    r.add_argument("--set", action="append", metavar="OPTION=VALUE", help="change one option")
    r.add_argument("--actions", action="store_true", help="also print the action table layout")
    r.set_defaults(func=cmd_rules)

    d = sub.add_parser("demo", help="play and print one hand between random players")
    _add_rules_args(d)
    d.add_argument("--players", type=_args.players, default=2)
    d.add_argument("--seed", type=_args.seed, default=0)
    d.set_defaults(func=cmd_demo)

    for module_name in SUBCOMMAND_MODULES:
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as e:
            if e.name != module_name:
                raise
            continue
        module.register(sub)
    return p


#: Modules that add subcommands: each has ``register(subparsers)`` and keeps
#: its heavy imports inside the command function.
SUBCOMMAND_MODULES = (
    "tonk_cli.bench_cmd",
    "tonk_cli.eval_cmd",
    "tonk_cli.train_cmd",
    "tonk_cli.tournament_cmd",
    "tonk_cli.play_cmd",
    "tonk_cli.exploit_cmd",
    "tonk_cli.improve_cmd",
    "tonk_cli.clone_cmd",
    "tonk_cli.average_cmd",
    "tonk_cli.widen_cmd",
    "tonk_cli.zoo_cmd",
    "tonk_cli.belief_cmd",
    "tonk_cli.luck_cmd",
    "tonk_cli.headroom_cmd",
    "tonk_cli.docs_cmd",
)


#: The list positionals that may go on after flags (``tonk train CONFIG --no-progress total_steps=10``).
_TRAILING_LISTS = ("overrides", "items", "opponents")


def _parse(parser: argparse.ArgumentParser, argv: Sequence[str] | None) -> argparse.Namespace:
    """Parse ``argv``; ``KEY=VALUE`` overrides (and other list positionals) may come before or after flags."""
    args, extra = parser.parse_known_args(argv)
    if extra:
        target = next((n for n in _TRAILING_LISTS if isinstance(getattr(args, n, None), list)), None)
        if target is None or any(x.startswith("-") for x in extra):
            parser.error(f"unrecognized arguments: {' '.join(extra)}")
        getattr(args, target).extend(extra)
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``tonk`` console command."""
    try:
        args = _parse(build_parser(), argv)
    except SystemExit as e:  # a bad flag (argparse said why, exit status 2) or --help (0): a return code
        return e.code if isinstance(e.code, int) else 2
    # SIGTERM unwinds like Ctrl-C: ``with`` blocks close their worker pools and files instead of
    # the process dying with its workers orphaned (training installs its own graceful handler).
    global _MAIN_PID
    old = None
    if threading.current_thread() is threading.main_thread():
        _MAIN_PID = os.getpid()
        old = signal.signal(signal.SIGTERM, _terminated)
    try:
        return int(args.func(args) or 0)
    except ValueError as e:
        print(f"tonk {args.command}: error: {e}", file=sys.stderr)
        return 2
    except WorkerDiedError as e:  # not the user's mistake (out of memory, most likely), but no traceback
        print(f"tonk {args.command}: error: {e}", file=sys.stderr)
        return 1
    except OSError as e:  # the file system refused: a folder that cannot be made, no permission, a full disk
        if isinstance(e, BrokenPipeError) and _stdout_gone():  # `tonk ... | head`: the reader had enough
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # nor at exit's flush
            return 128 + signal.SIGPIPE
        print(f"tonk {args.command}: error: {os_message(e)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"tonk {args.command}: interrupted", file=sys.stderr)
        return 130
    except Terminated:
        print(f"tonk {args.command}: terminated", file=sys.stderr)
        return 143
    finally:
        if old is not None:
            signal.signal(signal.SIGTERM, old)


def _stdout_gone() -> bool:
    """Whether stdout is a pipe whose reader has closed it (``tonk rules | head``), not another pipe."""
    try:
        poll = select.poll()
        poll.register(sys.stdout.fileno(), select.POLLOUT)
        return any(events & select.POLLERR for _, events in poll.poll(0))
    except (AttributeError, OSError, ValueError):  # no file descriptor (a test's capture), no poll
        return False


def os_message(e: OSError) -> str:
    """An ``OSError`` as one line: ``/proc/x: No such file or directory`` (both paths of a rename)."""
    if e.filename is None:  # a write that failed (``No space left on device``): its words, no errno
        return e.strerror or " ".join(str(e).split()) or type(e).__name__
    where = f"{e.filename}" + (f" -> {e.filename2}" if e.filename2 is not None else "")
    return f"{where}: {e.strerror or type(e).__name__}"


class Terminated(BaseException):
    """Raised by SIGTERM in a ``tonk`` command (a BaseException, so ``except Exception`` lets it pass)."""


#: The process that installed :func:`_terminated`; a forked worker inherits the handler but not the role.
_MAIN_PID: int | None = None


def _terminated(signum: int, frame: object) -> None:
    if os.getpid() != _MAIN_PID:  # a forked pool worker being shut down: die quietly, as by default
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)
        return
    raise Terminated()


if __name__ == "__main__":
    sys.exit(main())
