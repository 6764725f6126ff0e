"""The course API's update message: the full snapshot of a game, as the course server sent it on `update`."""

from accounts.nicks import nick_of
from core.jsontext import compact
from games.models import Game
from games.rules import tab


def game_snapshot(game: Game, state: tab.State | None = None) -> dict:
    """Return the full state of a started game as the update stream sends it (without `winner`); `state`, when
    given, is the rules state of `game.state`, already decoded."""
    if state is None:
        state = tab.State.from_json(game.state)
    blue, red = game.seat_user_ids
    nicks = {tab.BLUE: nick_of(blue), tab.RED: nick_of(red)}
    snapshot = {
        "pieces": [piece.to_json() if piece else None for piece in state.pieces],
        "initial": nicks[tab.BLUE],
        "players": {nicks[tab.BLUE]: tab.BLUE, nicks[tab.RED]: tab.RED},
        "turn": nicks[state.turn],
        "step": state.step,
        "dice": state.dice.to_json() if state.dice else None,
        "mustPass": nicks[state.turn] if state.must_pass else None,
    }
    # A game ended off the board (left, out of time, ended by an administrator) ends on no play of a piece: clients
    # of the course server read `cell`/`selected` as "a piece was just selected or moved".
    forfeited = game.status == Game.Status.FINISHED and game.ending not in Game.BOARD_ENDINGS
    if state.cell is not None and not forfeited:
        snapshot["cell"] = state.cell
    if state.selected is not None and not forfeited:
        snapshot["selected"] = list(state.selected)
    return snapshot


def game_message(game: Game, state: tab.State | None = None) -> dict | None:
    """Return the update message for the game's current version, or None while it waits for an opponent."""
    if game.status == Game.Status.WAITING:
        return None
    if game.state is None:
        # Ended while waiting: there is no board to show.
        return {"winner": None}
    message = game_snapshot(game, state)
    if game.status == Game.Status.FINISHED:
        message["winner"] = None if game.winner_id is None else nick_of(game.winner_id)
    return message


def render(game: Game, state: tab.State | None) -> str | None:
    """Return the update message of the game's current version as the stream sends it, or None while it waits."""
    message = game_message(game, state)
    return None if message is None else compact(message).decode()
