import secrets

from django.conf import settings
from django.db import models
from django.urls import reverse
from django.utils import timezone

from .rules import UnknownGame, find_engine, labels


def new_public_id() -> str:
    """Return a random, unguessable game id (128 bits)."""
    return secrets.token_hex(16)


# The largest group number of a pool named by one (a course group, the group of an invitation): the course server's
# groups are 32-bit integers.
GROUP_MAX = 2**31 - 1


class Game(models.Model):
    """One match of any game the platform hosts: its kind and options, where it stands (its engine's JSON), its
    timing, and how it ended (its players are its Seat rows)."""

    class Status(models.TextChoices):
        WAITING = "waiting", "waiting for an opponent"
        PLAYING = "playing", "playing"
        FINISHED = "finished", "finished"

    class Ending(models.TextChoices):
        # On the board (the engine's outcome).
        WIN = "win", "on the board"
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
    # The engine's options (Tâb: {"size": 9}), and the part of them that is rated apart (`Engine.variant`: "9").
    options = models.JSONField(default=dict, blank=True)
    variant = models.CharField(max_length=20, blank=True, default="")
    # Where players meet and are ranked, in the transport's terms (Tâb: the course group, "5"); empty for matches
    # that belong to no pool (practice against the computer).
    pool = models.CharField(max_length=40, blank=True, default="")
    # How many seats the match has; it starts when they are all taken (the players are its Seat rows).
    seat_count = models.PositiveSmallIntegerField(default=2)
    # Each player's time for the whole game in milliseconds, in games with a clock per player (draughts); None in
    # games timed turn by turn (TAB_TURN_TIMEOUT). With clocks, `deadline` is when the clock on turn runs out.
    clock_ms = models.PositiveIntegerField(null=True, blank=True)
    # In games timed turn by turn, the seconds a player on turn has for each action, when the match has its own
    # (Plakoto's PLAKOTO_TURN_TIMEOUT, Fish's FISH_TURN_TIMEOUT, which may have decimals); else TAB_TURN_TIMEOUT.
    turn_seconds = models.FloatField(null=True, blank=True)
    # With clocks, the milliseconds left on each seat's clock when it last stopped, seat 0 first (the running one is
    # read from `deadline`). The seats whose offer of a draw stands (an offer stands until withdrawn; every seat
    # offering ends the game drawn). Both on the game's row, written by the statement that saves an action.
    clocks = models.JSONField(null=True, blank=True)
    draw_offers = models.JSONField(default=list, blank=True)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.WAITING)
    state = models.JSONField(null=True, blank=True)
    version = models.PositiveIntegerField(default=0)
    deadline = models.DateTimeField(null=True, blank=True)
    # The one player ranked first, when one is (every seat's rank is on its Seat).
    winner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+", null=True, blank=True
    )
    ending = models.CharField(max_length=10, choices=Ending.choices, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # When the match last changed (its log's last entry): what clients that poll compare.
    changed_at = models.DateTimeField(null=True, blank=True)
    # When a player first acted in it (the server's own actions, such as Plakoto's rolls, are nobody's); None while
    # nobody has: a match left or timed out then counts for no one, else two accounts could mint victories.
    acted_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [
            # Pairing looks for the oldest match waiting in a (kind, variant, pool).
            models.Index(
                fields=["kind", "variant", "pool", "created_at"],
                name="game_waiting_idx",
                condition=models.Q(status="waiting"),
            ),
            # The sweeper looks only at games whose deadline has passed.
            models.Index(fields=["deadline"], name="game_deadline_idx", condition=models.Q(deadline__isnull=False)),
            # The history pages list the games that started, newest first: all of them, or a player's.
            models.Index(fields=["-started_at"], name="game_started_idx", condition=models.Q(started_at__isnull=False)),
        ]

    def __str__(self) -> str:
        return f"{self.public_id} ({self.get_status_display()})"

    def get_absolute_url(self) -> str:
        """The game's page: its replay once finished, the live view while in play (the admin's "View on site")."""
        return reverse("game", args=[self.public_id])

    @property
    def seat_user_ids(self) -> list[int]:
        """Return the user id in each seat taken, seat 0 first (read once; services keep it up to date)."""
        if "_seat_user_ids" not in self.__dict__:
            if self.pk is None:
                self._seat_user_ids = []
            elif "seats" in getattr(self, "_prefetched_objects_cache", {}):
                # The seats a list fetched along.
                self._seat_user_ids = [seat.user_id for seat in sorted(self.seats.all(), key=lambda seat: seat.index)]
            else:
                self._seat_user_ids = list(self.seats.order_by("index").values_list("user_id", flat=True))
        return self._seat_user_ids

    @property
    def title(self) -> str:
        """Return the game's name, for people ("Tâb")."""
        return labels(self.kind, self.variant)[0]

    @property
    def variant_label(self) -> str:
        """Return the variant's label, for people ("9 columns")."""
        return labels(self.kind, self.variant)[1]

    @property
    def players(self) -> list:
        """Return the users in the seats, seat 0 first (prefetch `seats__user` for lists)."""
        return [seat.user for seat in sorted(self.seats.all(), key=lambda seat: seat.index)]


class Seat(models.Model):
    """A player's place in a match: which seat, their clock where the game has one, and their final rank."""

    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="seats")
    index = models.PositiveSmallIntegerField()
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="seats")
    # Milliseconds left on the player's clock when the game ended, in games with a clock per player.
    clock_ms = models.PositiveIntegerField(null=True, blank=True)
    # 1 is first, equal ranks share a place; None until the match ends, and in matches that ended with no result.
    rank = models.PositiveSmallIntegerField(null=True, blank=True)
    # The player's rating in the game's variant before and after this match, in matches that were rated.
    rating_before = models.FloatField(null=True, blank=True)
    rating_after = models.FloatField(null=True, blank=True)

    class Meta:
        ordering = ["game", "index"]
        constraints = [
            models.UniqueConstraint(fields=["game", "index"], name="seat_index_unique"),
            models.UniqueConstraint(fields=["game", "user"], name="seat_user_unique"),
        ]
        # A player's games, for their page and their waiting matches.
        indexes = [models.Index(fields=["user", "game"], name="seat_user_idx")]

    def __str__(self) -> str:
        return f"seat {self.index} of {self.game_id}: {self.user_id}"

    @property
    def rating_change(self) -> str:
        """Return the rating change of a rated match in whole numbers, as the site shows ratings ("1500 → 1516 (+16)"),
        or ""."""
        if self.rating_before is None or self.rating_after is None:
            return ""
        before, after = round(self.rating_before), round(self.rating_after)
        return f"{before} → {after} ({'+' if after >= before else '−'}{abs(after - before)})"


class GameEvent(models.Model):
    """One entry of a game's log, in order: the platform's (created, started, left, …) and every action the game's
    engine applied, with the JSON details it wrote (`Played`), which a replay gives back to the engine."""

    class Kind(models.TextChoices):
        """The platform's entries; the others are named by the game's engine (`Engine.action_labels`)."""

        CREATE = "create", "created, waiting for an opponent"
        START = "start", "paired, game started"
        LEAVE = "leave", "left"
        TIMEOUT = "timeout", "ran out of time"
        END = "end", "ended by an administrator"
        DRAW_OFFER = "draw-offer", "offered a draw"
        DRAW_CANCEL = "draw-cancel", "withdrew the offer of a draw"
        # Taken out of a game that goes on without them (`Engine.remove`: Fish), for breaking a rule or running out of
        # time (data: {"why": "rule" or "timeout"}).
        REMOVE = "remove", "was removed from the game"

    # No index of its own: the unique (game, seq) below serves every lookup by game, and each action writes an entry
    # (one index fewer to update: BENCHMARKS.md).
    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="events", db_index=False)
    seq = models.PositiveIntegerField()
    kind = models.CharField(max_length=20)
    player = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+", null=True)
    data = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["game", "seq"]
        constraints = [models.UniqueConstraint(fields=["game", "seq"], name="game_event_seq_unique")]

    def __str__(self) -> str:
        return f"#{self.seq} {self.kind}"

    def get_kind_display(self) -> str:
        """Return what the entry means, for people: the platform's words or the game's engine's."""
        if self.kind in self.Kind.values:
            return self.Kind(self.kind).label
        try:
            return find_engine(self.game.kind).action_labels.get(self.kind, self.kind)
        except UnknownGame:
            return self.kind


class WaitingRoom(models.Model):
    """One row per (kind, variant, pool): joins lock it so that two simultaneous joins pair with each other."""

    kind = models.CharField(max_length=20, default="tab")
    variant = models.CharField(max_length=20, blank=True, default="")
    pool = models.CharField(max_length=40, blank=True, default="")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["kind", "variant", "pool"], name="waiting_room_unique")]

    def __str__(self) -> str:
        return f"{self.kind} {self.variant} in {self.pool or 'no pool'}"


class SweepMark(models.Model):
    """When a deadline sweeper last ran, in any server process (one row): a gap longer than the grace is an outage
    of ours, which the next sweep makes good by pushing back the deadlines it froze (games/services.py)."""

    swept_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"swept at {self.swept_at:%Y-%m-%d %H:%M:%S}"


class Invitation(models.Model):
    """A player's invitation to a match: to whoever opens its link, or to one player (a rematch). The match starts
    when it is accepted, with both players seated; until then it is no match, and the pairing of strangers never
    sees it."""

    class Status(models.TextChoices):
        OPEN = "open", "open"
        ACCEPTED = "accepted", "accepted"
        DECLINED = "declined", "declined"
        CANCELLED = "cancelled", "cancelled"

    token = models.CharField(max_length=32, unique=True, default=new_public_id, editable=False)
    kind = models.CharField(max_length=20, default="tab")
    options = models.JSONField(default=dict, blank=True)
    pool = models.CharField(max_length=40, blank=True, default="")
    inviter = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="invitations_sent")
    # Nobody: whoever opens the link first.
    invitee = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="invitations_received", null=True, blank=True
    )
    # The match this one would be a rematch of.
    rematch_of = models.ForeignKey(Game, on_delete=models.SET_NULL, related_name="+", null=True, blank=True)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.OPEN)
    created_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField()
    game = models.OneToOneField(Game, on_delete=models.SET_NULL, related_name="invitation", null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["invitee", "status"], name="invitation_invitee_idx")]

    def __str__(self) -> str:
        return f"{self.kind} from {self.inviter_id} ({self.status})"


class Analysis(models.Model):
    """The computer's look at a finished game (games/analysis.py): each position's chances and the costliest turns,
    made in the background after the game ended (`data`: games.bots.analysis.Review.to_json), or why it could not be
    (`error`). The row is made when an analysing process takes the game, so that no other takes it too; it is made
    (`made_at`) once the analysis is stored."""

    game = models.OneToOneField(Game, on_delete=models.CASCADE, related_name="analysis", primary_key=True)
    data = models.JSONField(null=True, blank=True)
    error = models.CharField(max_length=200, blank=True)
    # What it cost: seconds of the analysing process.
    seconds = models.FloatField(default=0.0)
    taken_at = models.DateTimeField(default=timezone.now)
    made_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name_plural = "analyses"

    def __str__(self) -> str:
        return f"analysis of {self.game_id}"

    @property
    def state(self) -> str:
        """Return "made", "failed" (made, with no data) or "pending" (taken, in progress)."""
        if self.made_at is None:
            return "pending"
        return "failed" if self.data is None else "made"
