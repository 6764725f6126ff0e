import uuid

from django.db import models

from games.models import Game


class Room(models.Model):
    """A room of the draughts room server: a match for two known only by random UUIDs, its own and one per colour.

    Whoever gives a colour's UUID plays that colour (its seat's account is an anonymous one, made with the room). A
    colour is *in* the room from its CREATE or JOIN until it leaves; the room is deleted (its UUIDs retired, its
    game kept) when, after a leave, neither colour is in it. A colour is *held* while a live connection has it: the
    holder's token, and until when the hold counts without news from it (line servers renew their holds every few
    seconds; a page renews its own).
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    game = models.OneToOneField(Game, on_delete=models.CASCADE, related_name="room")
    white_key = models.UUIDField(unique=True, default=uuid.uuid4, editable=False)
    black_key = models.UUIDField(unique=True, default=uuid.uuid4, editable=False)
    # The colour of the room's creator: "w" or "b".
    creator = models.CharField(max_length=1)
    white_in = models.BooleanField(default=False)
    black_in = models.BooleanField(default=False)
    # The connection holding each colour ("" when none), the process serving it, and until when the hold counts.
    white_holder = models.CharField(max_length=80, blank=True, default="")
    black_holder = models.CharField(max_length=80, blank=True, default="")
    white_process = models.CharField(max_length=120, blank=True, default="")
    black_process = models.CharField(max_length=120, blank=True, default="")
    white_held_until = models.DateTimeField(null=True, blank=True)
    black_held_until = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    deleted_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [
            # A server process renews, and at its start clears, the holds of its connections.
            models.Index(
                fields=["white_process"], name="room_white_process_idx", condition=~models.Q(white_process="")
            ),
            models.Index(
                fields=["black_process"], name="room_black_process_idx", condition=~models.Q(black_process="")
            ),
        ]

    def __str__(self) -> str:
        return str(self.id)
