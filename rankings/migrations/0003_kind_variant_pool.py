"""Rankings and ratings keyed by game, variant and pool instead of Tâb's group and board size: a Tâb ranking of
group G on size S becomes ("tab", "S", "G"), a Tâb rating on size S becomes ("tab", "S"); nothing else changes."""

from django.db import migrations, models


def to_keys(apps, schema_editor):
    Ranking, Rating = apps.get_model("rankings", "Ranking"), apps.get_model("rankings", "Rating")
    for group, size in Ranking.objects.values_list("group", "size").distinct():
        Ranking.objects.filter(group=group, size=size).update(kind="tab", variant=str(size), pool=str(group))
    for size in Rating.objects.values_list("size", flat=True).distinct():
        Rating.objects.filter(size=size).update(kind="tab", variant=str(size))


def from_keys(apps, schema_editor):
    Ranking, Rating = apps.get_model("rankings", "Ranking"), apps.get_model("rankings", "Rating")
    # Only Tâb had groups and sizes: other games' results have no place in the older schema.
    Ranking.objects.exclude(kind="tab").delete()
    Rating.objects.exclude(kind="tab").delete()
    for variant, pool in Ranking.objects.values_list("variant", "pool").distinct():
        Ranking.objects.filter(variant=variant, pool=pool).update(size=int(variant), group=int(pool))
    for variant in Rating.objects.values_list("variant", flat=True).distinct():
        Rating.objects.filter(variant=variant).update(size=int(variant))


class Migration(migrations.Migration):
    dependencies = [
        ("rankings", "0002_rating"),
    ]

    operations = [
        migrations.AddField(model_name="ranking", name="kind", field=models.CharField(default="tab", max_length=20)),
        migrations.AddField(
            model_name="ranking", name="variant", field=models.CharField(blank=True, default="", max_length=20)
        ),
        migrations.AddField(
            model_name="ranking", name="pool", field=models.CharField(blank=True, default="", max_length=40)
        ),
        migrations.AddField(model_name="rating", name="kind", field=models.CharField(default="tab", max_length=20)),
        migrations.AddField(
            model_name="rating", name="variant", field=models.CharField(blank=True, default="", max_length=20)
        ),
        # Nullable for the while, so that moving the data back can fill them again.
        migrations.AlterField(model_name="ranking", name="group", field=models.PositiveIntegerField(null=True)),
        migrations.AlterField(model_name="ranking", name="size", field=models.PositiveSmallIntegerField(null=True)),
        migrations.AlterField(model_name="rating", name="size", field=models.PositiveSmallIntegerField(null=True)),
        migrations.RunPython(to_keys, from_keys),
        migrations.RemoveConstraint(model_name="ranking", name="ranking_player_unique"),
        migrations.RemoveIndex(model_name="ranking", name="ranking_order_idx"),
        migrations.RemoveConstraint(model_name="rating", name="rating_player_size_unique"),
        migrations.RemoveField(model_name="ranking", name="group"),
        migrations.RemoveField(model_name="ranking", name="size"),
        migrations.RemoveField(model_name="rating", name="size"),
        migrations.AddConstraint(
            model_name="ranking",
            constraint=models.UniqueConstraint(
                fields=("kind", "variant", "pool", "player"), name="ranking_player_unique"
            ),
        ),
        migrations.AddIndex(
            model_name="ranking",
            index=models.Index(fields=["kind", "variant", "pool", "-victories", "games"], name="ranking_order_idx"),
        ),
        migrations.AddConstraint(
            model_name="rating",
            constraint=models.UniqueConstraint(
                fields=("player", "kind", "variant"), name="rating_player_variant_unique"
            ),
        ),
    ]
