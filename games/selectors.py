"""Reads that build what clients see of a game."""

from .models import Game
from .rules import tab


def game_snapshot(game: Game) -> dict:
    """Return the full state of a started game as the update stream sends it (without `winner`)."""
    state = tab.State.from_json(game.state)
    nicks = {tab.BLUE: game.initial_player.username, tab.RED: game.second_player.username}
    snapshot = {
        "pieces": [piece.to_json() if piece else None for piece in state.pieces],
        "initial": nicks[tab.BLUE],
        "players": {nicks[tab.BLUE]: tab.BLUE, nicks[tab.RED]: tab.RED},
        "turn": nicks[state.turn],
        "step": state.step,
        "dice": state.dice.to_json() if state.dice else None,
        "mustPass": nicks[state.turn] if state.must_pass else None,
    }
    if state.cell is not None:
        snapshot["cell"] = state.cell
    if state.selected is not None:
        snapshot["selected"] = list(state.selected)
    return snapshot


def game_message(game: Game) -> dict | None:
    """Return the update message for the game's current version, or None while it waits for an opponent."""
    if game.status == Game.Status.WAITING:
        return None
    if game.state is None:
        # Ended while waiting: there is no board to show.
        return {"winner": None}
    message = game_snapshot(game)
    if game.status == Game.Status.FINISHED:
        message["winner"] = next((p.username for p in game.players if p.pk == game.winner_id), None)
    return message
