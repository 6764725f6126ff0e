#!/usr/bin/env python3
"""The floor of `make bench`'s Tâb scenarios: the least a Python server can do for them on this machine.

    python bench/floor.py --port 8100 [--host 127.0.0.1]

A minimal server of the course API, enough for `bench/load.py`: `register`, `join`, `leave`, `roll`, `pass`,
`notify`, `ranking` (always empty) and the `update` stream, with the same rules (games/rules/tab.py) and the same
update messages as ours. Everything is kept in memory and nothing is persisted, checked or limited beyond the rules:
no database, no accounts' hashes, no framework, one process, uvicorn's fastest loop and parser. Our server's figures are
reported beside this one's (bench/run.py --floor): the cost of everything a real server does that this one does not.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import uvicorn

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from games.rules.base import IllegalAction  # noqa: E402  (the rules alone: no Django)
from games.rules.tab import ENGINE, SEATS, Pass, Roll, Select  # noqa: E402

RNG = random.Random()
HEADERS = [(b"content-type", b"application/json"), (b"access-control-allow-origin", b"*")]
STREAM_HEADERS = [(b"content-type", b"text/event-stream"), (b"cache-control", b"no-cache")]


@dataclass
class Game:
    id: str
    nicks: list[str]
    size: int
    state: Any = None
    version: int = 0
    over: bool = False
    winner: str | None = None
    followers: list[asyncio.Queue[bytes]] = field(default_factory=list)

    def message(self) -> bytes:
        state = self.state
        nick = dict(zip(SEATS, self.nicks, strict=True))
        data: dict[str, Any] = {
            "pieces": [piece.to_json() if piece else None for piece in state.pieces],
            "initial": self.nicks[0],
            "players": {self.nicks[0]: SEATS[0], self.nicks[1]: SEATS[1]},
            "turn": nick[state.turn],
            "step": state.step,
            "dice": state.dice.to_json() if state.dice else None,
            "mustPass": nick[state.turn] if state.must_pass else None,
        }
        if state.cell is not None:
            data["cell"] = state.cell
        if state.selected is not None:
            data["selected"] = list(state.selected)
        if self.over:
            data["winner"] = self.winner
        return f"id: {self.version}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n".encode()

    def changed(self) -> None:
        self.version += 1
        message = self.message()
        for queue in self.followers:
            queue.put_nowait(message)


class Refused(Exception):
    pass


passwords: dict[str, str] = {}
waiting: dict[tuple[int, int], Game] = {}
games: dict[str, Game] = {}
counter = iter(range(1, 10**12))


def player(args: dict[str, Any]) -> str:
    nick = args.get("nick")
    if not isinstance(nick, str) or passwords.get(nick) != args.get("password"):
        raise Refused("User registered with a different password")
    return nick


def game_of(args: dict[str, Any], nick: str) -> Game:
    game = games.get(str(args.get("game")))
    if game is None or nick not in game.nicks:
        raise Refused("Invalid game")
    return game


def register(args: dict[str, Any]) -> dict[str, Any]:
    nick, password = args.get("nick"), args.get("password")
    if not isinstance(nick, str) or not isinstance(password, str):
        raise Refused("nick and password are strings")
    if passwords.setdefault(nick, password) != password:
        raise Refused("User registered with a different password")
    return {}


def join(args: dict[str, Any]) -> dict[str, Any]:
    nick = player(args)
    key = (int(args["group"]), int(args["size"]))
    game = waiting.pop(key, None)
    if game is None or game.nicks[0] == nick:
        game = Game(f"g{next(counter)}", [nick], key[1])
        waiting[key] = game
        games[game.id] = game
    else:
        game.nicks.append(nick)
        game.state = ENGINE.new(2, {"size": game.size}, RNG)
        game.changed()
    return {"game": game.id}


def leave(args: dict[str, Any]) -> dict[str, Any]:
    nick = player(args)
    game = game_of(args, nick)
    if game.state is None:
        waiting.pop(next((key for key, waited in waiting.items() if waited is game), (0, 0)), None)
    elif not game.over:
        game.over, game.winner = True, next(other for other in game.nicks if other != nick)
        game.changed()
    return {}


def act(args: dict[str, Any], action: Any) -> dict[str, Any]:
    nick = player(args)
    game = game_of(args, nick)
    if game.state is None or game.over:
        raise Refused("Game not in play")
    try:
        ENGINE.apply(game.state, game.nicks.index(nick), action, RNG)
    except IllegalAction as error:
        raise Refused(str(error)) from None
    if ENGINE.to_act(game.state) is None:
        game.over, game.winner = True, game.nicks[SEATS.index(game.state.winner)]
    game.changed()
    return {}


FUNCTIONS = {
    "/register": register,
    "/join": join,
    "/leave": leave,
    "/roll": lambda args: act(args, Roll()),
    "/pass": lambda args: act(args, Pass()),
    "/notify": lambda args: act(args, Select(int(args.get("cell", args.get("move"))))),
    "/ranking": lambda args: {"ranking": []},
}


async def answer(send: Any, status: int, data: dict[str, Any]) -> None:
    await send({"type": "http.response.start", "status": status, "headers": HEADERS})
    await send({"type": "http.response.body", "body": json.dumps(data).encode()})


async def update(scope: dict[str, Any], receive: Any, send: Any) -> None:
    query = parse_qs(scope["query_string"].decode())
    game = games.get(query.get("game", [""])[0])
    if game is None or query.get("nick", [""])[0] not in game.nicks:
        await answer(send, 400, {"error": "Invalid game reference"})
        return
    queue: asyncio.Queue[bytes] = asyncio.Queue()
    game.followers.append(queue)
    await send({"type": "http.response.start", "status": 200, "headers": STREAM_HEADERS})
    if game.state is not None:
        queue.put_nowait(game.message())
    await receive()  # the request's (empty) body; the next message is the client's going
    disconnected = asyncio.ensure_future(receive())
    try:
        while True:
            getting = asyncio.ensure_future(queue.get())
            done, _ = await asyncio.wait({getting, disconnected}, return_when=asyncio.FIRST_COMPLETED)
            if disconnected in done:
                getting.cancel()
                return
            await send({"type": "http.response.body", "body": getting.result(), "more_body": True})
    finally:
        game.followers.remove(queue)


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] == "lifespan":
        while (await receive())["type"] != "lifespan.shutdown":
            await send({"type": "lifespan.startup.complete"})
        await send({"type": "lifespan.shutdown.complete"})
        return
    path = scope["path"]
    if scope["method"] == "GET":
        if path == "/update":
            await update(scope, receive, send)
        else:
            await answer(send, 200 if path == "/" else 404, {})
        return
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            break
    function = FUNCTIONS.get(path)
    if function is None:
        await answer(send, 404, {"error": "unknown request"})
        return
    try:
        args = json.loads(body or b"{}")
        await answer(send, 200, function(args))
    except Refused as error:
        await answer(send, 400, {"error": str(error)})
    except (ValueError, TypeError, KeyError) as error:
        await answer(send, 400, {"error": f"bad request: {error}"})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8100)
    args = parser.parse_args()
    uvicorn.run(
        app,
        host=args.host,
        port=args.port,
        loop="uvloop",
        http="httptools",
        lifespan="on",
        log_level="warning",
        access_log=False,
    )


if __name__ == "__main__":
    main()
