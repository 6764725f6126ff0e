from django.db import migrations, models

COLORS = ("Blue", "Red")  # Tâb's seats, as logs written before seats were numbered name them


def end_winner_as_seat(apps, schema_editor):
    """An administrator's end of a game names the winner by seat (0, 1) instead of by Tâb's colour."""
    GameEvent = apps.get_model("games", "GameEvent")
    for event in GameEvent.objects.filter(kind="end").only("id", "data"):
        winner = event.data.get("winner")
        if winner in COLORS:
            event.data = {**event.data, "winner": COLORS.index(winner)}
            event.save(update_fields=["data"])


def end_winner_as_color(apps, schema_editor):
    GameEvent = apps.get_model("games", "GameEvent")
    for event in GameEvent.objects.filter(kind="end").only("id", "data"):
        winner = event.data.get("winner")
        if winner in (0, 1):
            event.data = {**event.data, "winner": COLORS[winner]}
            event.save(update_fields=["data"])


class Migration(migrations.Migration):
    dependencies = [
        ("games", "0002_history"),
    ]

    operations = [
        migrations.AddField(
            model_name="game",
            name="kind",
            field=models.CharField(default="tab", max_length=20),
        ),
        migrations.RunPython(end_winner_as_seat, end_winner_as_color),
    ]
