"""Matches become generic: seats for 2 to 4 players instead of two player columns, and the engine's options, the
rated variant and the pool instead of Tâb's group and board size. Every Tâb game keeps its players, in the same
seats, its result (the winner ranked first), its board size (options and variant) and its group (the pool)."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


def rank_of(game, user_id):
    """Return a player's final rank in a finished Tâb game: 1 for the winner, 2 for the other; None without one."""
    if game.status != "finished" or game.winner_id is None:
        return None
    return 1 if user_id == game.winner_id else 2


def to_seats(apps, schema_editor):
    Game, Seat = apps.get_model("games", "Game"), apps.get_model("games", "Seat")
    seats = []
    for game in Game.objects.only(
        "id", "group", "size", "status", "winner_id", "initial_player_id", "second_player_id"
    ).iterator(chunk_size=2000):
        # Group 0 held the games against the computer, which belong to no course group.
        Game.objects.filter(pk=game.pk).update(
            options={"size": game.size}, variant=str(game.size), pool=str(game.group) if game.group else ""
        )
        for index, user_id in enumerate((game.initial_player_id, game.second_player_id)):
            if user_id is not None:
                seats.append(Seat(game_id=game.pk, index=index, user_id=user_id, rank=rank_of(game, user_id)))
        if len(seats) >= 2000:
            Seat.objects.bulk_create(seats)
            seats = []
    Seat.objects.bulk_create(seats)


def from_seats(apps, schema_editor):
    Game, Seat = apps.get_model("games", "Game"), apps.get_model("games", "Seat")
    players: dict[int, dict[int, int]] = {}
    for game_id, index, user_id in Seat.objects.values_list("game_id", "index", "user_id").iterator(chunk_size=2000):
        players.setdefault(game_id, {})[index] = user_id
    for game in Game.objects.only("id", "options", "pool").iterator(chunk_size=2000):
        seats = players.get(game.pk, {})
        Game.objects.filter(pk=game.pk).update(
            group=int(game.pool) if game.pool.isdigit() else 0,
            size=game.options.get("size", 9),
            initial_player_id=seats.get(0),
            second_player_id=seats.get(1),
        )


def empty_waiting_rooms(apps, schema_editor):
    # A waiting room is only the row that joins lock; joins make them again as they need them.
    apps.get_model("games", "WaitingRoom").objects.all().delete()


class Migration(migrations.Migration):
    dependencies = [
        ("games", "0004_endings"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="Seat",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("index", models.PositiveSmallIntegerField()),
                ("clock_ms", models.PositiveIntegerField(blank=True, null=True)),
                ("rank", models.PositiveSmallIntegerField(blank=True, null=True)),
                (
                    "game",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE, related_name="seats", to="games.game"
                    ),
                ),
                (
                    "user",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="seats",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            options={"ordering": ["game", "index"]},
        ),
        migrations.AddField(model_name="game", name="options", field=models.JSONField(blank=True, default=dict)),
        migrations.AddField(
            model_name="game", name="pool", field=models.CharField(blank=True, default="", max_length=40)
        ),
        migrations.AddField(model_name="game", name="seat_count", field=models.PositiveSmallIntegerField(default=2)),
        migrations.AddField(
            model_name="game", name="variant", field=models.CharField(blank=True, default="", max_length=20)
        ),
        migrations.AlterField(model_name="gameevent", name="kind", field=models.CharField(max_length=20)),
        # Nullable for the while, so that moving the data back can fill them again.
        migrations.AlterField(model_name="game", name="group", field=models.PositiveIntegerField(null=True)),
        migrations.AlterField(model_name="game", name="size", field=models.PositiveSmallIntegerField(null=True)),
        migrations.AlterField(
            model_name="game",
            name="initial_player",
            field=models.ForeignKey(
                null=True, on_delete=django.db.models.deletion.PROTECT, related_name="+", to=settings.AUTH_USER_MODEL
            ),
        ),
        migrations.RunPython(to_seats, from_seats),
        migrations.RemoveIndex(model_name="game", name="game_waiting_idx"),
        migrations.RemoveIndex(model_name="game", name="game_initial_player_idx"),
        migrations.RemoveIndex(model_name="game", name="game_second_player_idx"),
        migrations.RemoveField(model_name="game", name="group"),
        migrations.RemoveField(model_name="game", name="initial_player"),
        migrations.RemoveField(model_name="game", name="second_player"),
        migrations.RemoveField(model_name="game", name="size"),
        migrations.AddIndex(
            model_name="game",
            index=models.Index(
                condition=models.Q(("status", "waiting")),
                fields=["kind", "variant", "pool", "created_at"],
                name="game_waiting_idx",
            ),
        ),
        migrations.AddIndex(model_name="seat", index=models.Index(fields=["user", "game"], name="seat_user_idx")),
        migrations.AddConstraint(
            model_name="seat", constraint=models.UniqueConstraint(fields=("game", "index"), name="seat_index_unique")
        ),
        migrations.AddConstraint(
            model_name="seat", constraint=models.UniqueConstraint(fields=("game", "user"), name="seat_user_unique")
        ),
        # Both ways, the rooms are emptied before their columns change (and their old rows would collide).
        migrations.RunPython(empty_waiting_rooms, empty_waiting_rooms),
        migrations.RemoveConstraint(model_name="waitingroom", name="waiting_room_unique"),
        migrations.RemoveField(model_name="waitingroom", name="group"),
        migrations.RemoveField(model_name="waitingroom", name="size"),
        migrations.AddField(
            model_name="waitingroom", name="kind", field=models.CharField(default="tab", max_length=20)
        ),
        migrations.AddField(
            model_name="waitingroom", name="pool", field=models.CharField(blank=True, default="", max_length=40)
        ),
        migrations.AddField(
            model_name="waitingroom", name="variant", field=models.CharField(blank=True, default="", max_length=20)
        ),
        migrations.AddConstraint(
            model_name="waitingroom",
            constraint=models.UniqueConstraint(fields=("kind", "variant", "pool"), name="waiting_room_unique"),
        ),
        migrations.RunPython(empty_waiting_rooms, empty_waiting_rooms),
    ]
