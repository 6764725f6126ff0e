import secrets

from django.conf import settings
from django.db import models


def new_public_id() -> str:
    """Return a random, unguessable game id (128 bits)."""
    return secrets.token_hex(16)


class Game(models.Model):
    """One game of Tâb: who plays it, where it stands (the rules module's JSON) and how it ended."""

    class Status(models.TextChoices):
        WAITING = "waiting", "waiting for an opponent"
        PLAYING = "playing", "playing"
        FINISHED = "finished", "finished"

    class Ending(models.TextChoices):
        # On the board (the engine's outcome).
        WIN = "win", "won on the board"
        DRAW = "draw", "drawn on the board"
        NO_MOVE = "no-move", "a player had no legal move"
        SCORE = "score", "decided by the score"
        # Off the board (the platform's).
        AGREED = "agreed", "drawn by agreement"
        LEAVE = "leave", "a player left"
        TIMEOUT = "timeout", "a player ran out of time"
        FLAG = "flag", "a player's clock ran out"
        KICK = "kick", "a player was removed for breaking the rules"
        ABANDONED = "abandoned", "abandoned by its players"
        CANCELLED = "cancelled", "left while waiting"
        EXPIRED = "expired", "no opponent came"
        ENDED = "ended", "ended by an administrator"

    # The endings the rules decided; every other one was decided off the board.
    BOARD_ENDINGS = frozenset({Ending.WIN, Ending.DRAW, Ending.NO_MOVE, Ending.SCORE})

    public_id = models.CharField(max_length=32, unique=True, default=new_public_id, editable=False)
    # The game it is a match of: the key of its engine in games.rules.ENGINES.
    kind = models.CharField(max_length=20, default="tab")
    group = models.PositiveIntegerField()
    size = models.PositiveSmallIntegerField()
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.WAITING)
    initial_player = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    second_player = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+", null=True, blank=True
    )
    state = models.JSONField(null=True, blank=True)
    version = models.PositiveIntegerField(default=0)
    deadline = models.DateTimeField(null=True, blank=True)
    winner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+", null=True, blank=True
    )
    ending = models.CharField(max_length=10, choices=Ending.choices, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [
            # Pairing looks for the oldest game waiting in a (group, size).
            models.Index(
                fields=["group", "size", "created_at"], name="game_waiting_idx", condition=models.Q(status="waiting")
            ),
            # The sweeper looks only at games whose deadline has passed.
            models.Index(fields=["deadline"], name="game_deadline_idx", condition=models.Q(deadline__isnull=False)),
            # The history pages list the games that started, newest first: all of them, or a player's.
            models.Index(fields=["-started_at"], name="game_started_idx", condition=models.Q(started_at__isnull=False)),
            models.Index(fields=["initial_player", "-started_at"], name="game_initial_player_idx"),
            models.Index(fields=["second_player", "-started_at"], name="game_second_player_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.public_id} ({self.get_status_display()})"

    @property
    def players(self) -> list:
        return [player for player in (self.initial_player, self.second_player) if player is not None]


class GameEvent(models.Model):
    """One entry of a game's log: every throw, selection, move, pass, leave and timeout, in order."""

    class Kind(models.TextChoices):
        CREATE = "create", "created, waiting for an opponent"
        START = "start", "paired, game started"
        THROW = "throw", "threw the sticks"
        SELECT = "select", "selected a piece"
        DESELECT = "deselect", "cancelled the selection"
        MOVE = "move", "moved a piece"
        PASS = "pass", "passed the turn"
        LEAVE = "leave", "left"
        TIMEOUT = "timeout", "ran out of time"
        END = "end", "ended by an administrator"

    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="events")
    seq = models.PositiveIntegerField()
    kind = models.CharField(max_length=10, choices=Kind.choices)
    player = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+", null=True)
    data = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["game", "seq"]
        constraints = [models.UniqueConstraint(fields=["game", "seq"], name="game_event_seq_unique")]

    def __str__(self) -> str:
        return f"#{self.seq} {self.kind}"


class WaitingRoom(models.Model):
    """One row per (group, size): joins lock it so that two simultaneous joins pair with each other."""

    group = models.PositiveIntegerField()
    size = models.PositiveSmallIntegerField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["group", "size"], name="waiting_room_unique")]

    def __str__(self) -> str:
        return f"group {self.group}, size {self.size}"
