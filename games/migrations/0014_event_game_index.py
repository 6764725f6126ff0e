# The log's index on its game alone duplicated the first column of the unique (game, seq): dropped as it stands (the
# ORM's own operation would rebuild the table on SQLite and check the foreign key again on PostgreSQL).

import django.db.models.deletion
from django.db import migrations, models

INDEX = "games_gameevent_game_id_57c09de4"


class Migration(migrations.Migration):
    dependencies = [
        ("games", "0013_analysis"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[
                migrations.RunSQL(
                    f'DROP INDEX IF EXISTS "{INDEX}"',
                    reverse_sql=f'CREATE INDEX "{INDEX}" ON "games_gameevent" ("game_id")',
                ),
            ],
            state_operations=[
                migrations.AlterField(
                    model_name="gameevent",
                    name="game",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="events",
                        to="games.game",
                    ),
                ),
            ],
        ),
    ]
