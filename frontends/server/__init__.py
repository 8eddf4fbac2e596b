"""``tonk serve``: Tonk over HTTP/JSON (FastAPI), and the browser game at ``/``.

Endpoints (the OpenAPI schema is at ``/openapi.json``, interactive docs at ``/docs``):

=======================================  ====================================================
``GET /``                                the browser game (one static page)
``GET /api/agents``                      agent specs offered, and the registered kinds
``GET /api/rules``                       presets and rule options with their defaults
``POST /api/games``                      new game: rules, players, your seat, agent specs
``GET /api/games/{id}``                  your seat's view, the running score, the hand's log
``POST /api/games/{id}/actions``         play your move (string or id); the agents answer
``POST /api/games/{id}/next``            deal the next hand (the deal passes to the left)
``GET /api/games/{id}/record``           the finished hand's record (deck included)
``DELETE /api/games/{id}``               end a game
``POST /api/agent-action``               stateless: ask any agent for its move in a position
``GET /replay``                          the replay viewer (one static page)
``POST /api/replay``                     a hand record as every position, for the replay viewer
=======================================  ====================================================

A game has one person's seat (``seat``, default 0); every other seat is played
by an agent, automatically, right after each move of the person (and after
the deal), until the person must act or the hand is over. A game's id is a
random token: whoever knows it plays that seat; only that seat's view is
served while the hand runs (``GET /api/games/{id}/record`` refuses until the
hand is over, because a record holds the deck).

``POST /api/agent-action`` takes a hand record (:mod:`tonk_env.engine.record`:
``rules``, ``num_players``, ``dealer``, ``deck``, ``actions``) and optionally
the seat that must be to act. The server replays it, builds the agent from
its spec and asks it; the agent sees only that seat's
:class:`~tonk_env.engine.SeatInfo` (never the deck), but the caller sends the
whole deal. Unseen cards in ``deck`` may be any consistent arrangement.

Every bad request is answered 4xx with ``{"detail": "..."}`` (a 422 adds
``errors``) and changes nothing; every status is declared in
``/openapi.json``. Moves are applied to a copy of the game that replaces it
only when everything succeeded, so a 503 (an agent's decision past the time
limit, a full queue, the server shutting down) also changes nothing. Error
messages quote input cut to about 100 characters.

The package, from the wire in:

- :mod:`.run`: the socket, the Host names served by default, uvicorn with a
  time limit on request headers;
- :mod:`.middleware`: the Host guard, ``OPTIONS``/405 with a full ``Allow``,
  the body's size, time and strict JSON;
- :mod:`.routes` and :mod:`.models`: the routes and their bodies and errors;
  the cheap routes answer on the event loop;
- :mod:`.work`: the agents' worker threads, a bounded queue shared client by
  client, and the stop of a request's work;
- :mod:`.play`: the desk: the games' tables and agents, and what a request
  that makes agents work does (the person's move and the score are the
  :class:`~frontends.table.Table`'s, as in the terminal game); :mod:`.child`:
  the desk in a process of its own (what ``tonk serve`` runs), so the
  searches never hold up the server;
- :mod:`.lobby`: the live games, each client's share, eviction, the agent
  allow-list;
- :mod:`.errors`: what the lobby and the desk refuse, in the games' words;
  the routes give each refusal its HTTP status;
- :mod:`.limits`: every bound, a flag of ``tonk serve`` each.

Agents loaded from files (path kinds such as ``ppo:PATH``, ``npz:PATH``,
``onnx:DIR``) are allowed only for the paths the server was started with
(``--agents ppo:PATH``); any other path is refused with 403. Built-in agents
(``random``, ``heuristic:*``, ``search:*``) are always allowed within the
caps of :class:`Limits`. ``tonk serve`` binds to 127.0.0.1 unless told
otherwise.
"""

from __future__ import annotations

from .app import create_app
from .child import ChildDesk
from .errors import AgentFailed, BadRequest, NoSuchGame, NotAllowed, NotNow
from .limits import MAX_SEED, MAX_TEXT, Limits, clip
from .lobby import FRESH_SECONDS, Game, Lobby
from .middleware import BodyGuard, HostGuard, Methods
from .models import ActionIn, AgentQuery, NewGame
from .play import Desk, TableGame, query_position
from .run import listen, loopback_hosts, serve, timed_protocol
from .work import Busy, Work, WorkQueue

__all__ = [
    "FRESH_SECONDS",
    "MAX_SEED",
    "MAX_TEXT",
    "ActionIn",
    "AgentFailed",
    "AgentQuery",
    "BadRequest",
    "BodyGuard",
    "Busy",
    "ChildDesk",
    "Desk",
    "Game",
    "HostGuard",
    "Limits",
    "Lobby",
    "Methods",
    "NewGame",
    "NoSuchGame",
    "NotAllowed",
    "NotNow",
    "TableGame",
    "Work",
    "WorkQueue",
    "clip",
    "create_app",
    "listen",
    "loopback_hosts",
    "query_position",
    "serve",
    "timed_protocol",
]
