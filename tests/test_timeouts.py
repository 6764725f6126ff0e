"""Deadlines: the sweeper's service ends games whose player on turn stayed idle, once, whatever calls it."""

from datetime import UTC, datetime, timedelta

import pytest
import time_machine
from django.utils import timezone

from games.models import Game, GameEvent
from games.services import game_expire_due, outage_bridge
from rankings.models import Ranking

from .conftest import tab_join
from .factories import UserFactory

pytestmark = pytest.mark.django_db


def later(seconds: float):
    return timezone.now() + timedelta(seconds=seconds)


@pytest.fixture
def started(api, alice, bob):
    _, body = api.as_player("alice")("join", group=4, size=7)
    api.as_player("bob")("join", group=4, size=7)
    return body["game"]


def test_nothing_expires_before_the_deadline(started, settings):
    assert game_expire_due(now=later(settings.TAB_TURN_TIMEOUT - 1)) == 0
    assert Game.objects.get(public_id=started).status == Game.Status.PLAYING


def test_the_idle_player_on_turn_loses_once(api, started, settings):
    assert api.as_player("alice")("roll", game=started)[0] == 200
    assert game_expire_due(now=later(settings.TAB_TURN_TIMEOUT + 1)) == 1
    game = Game.objects.get(public_id=started)
    assert (game.status, game.ending, game.winner.username, game.deadline) == ("finished", "timeout", "bob", None)
    timeout = game.events.get(kind=GameEvent.Kind.TIMEOUT)
    assert timeout.player.username == "alice"
    # A second sweep, in this process or another, finds nothing to do and counts nothing twice.
    assert game_expire_due(now=later(settings.TAB_TURN_TIMEOUT * 10)) == 0
    assert sorted(Ranking.objects.values_list("player__username", "victories", "games")) == [
        ("alice", 0, 1),
        ("bob", 1, 1),
    ]


def test_a_game_nobody_played_is_abandoned_and_counts_for_no_one(started, settings):
    """Join, join, wait: the player on turn still loses, as the protocol says, but two accounts must not mint
    victories by letting the time run out."""
    assert game_expire_due(now=later(settings.TAB_TURN_TIMEOUT + 1)) == 1
    game = Game.objects.get(public_id=started)
    assert (game.status, game.ending, game.winner.username, game.acted_at) == ("finished", "abandoned", "bob", None)
    assert not Ranking.objects.exists()
    # Recomputed from the logs, it still counts for no one.
    from games.services import games_recompute

    assert games_recompute()["games"] == 0 and not Ranking.objects.exists()


def test_the_clock_restarts_with_every_action(api, alice, bob, settings):
    timeout = timedelta(seconds=settings.TAB_TURN_TIMEOUT)
    joined = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
    with time_machine.travel(joined, tick=False) as clock:
        _, body = api.as_player("alice")("join", group=4, size=7)
        api.as_player("bob")("join", group=4, size=7)
        game = Game.objects.get(public_id=body["game"])
        assert game.deadline == joined + timeout

        clock.shift(50)
        # A refused action is no action: the clock runs on.
        assert api.as_player("bob")("roll", game=game.public_id) == (400, {"error": "Not your turn to play"})
        game.refresh_from_db()
        assert game.deadline == joined + timeout
        assert api.as_player("alice")("roll", game=game.public_id) == (200, {})
        game.refresh_from_db()
        assert game.deadline == joined + timedelta(seconds=50) + timeout

    # The first deadline has passed, but alice acted since: nothing is due until 50 s after it.
    assert game_expire_due(now=joined + timeout + timedelta(seconds=1)) == 0
    assert game_expire_due(now=joined + timeout + timedelta(seconds=51)) == 1


def test_a_lonely_wait_expires_without_a_winner(api, alice, settings):
    _, body = api.as_player("alice")("join", group=5, size=7)
    assert game_expire_due(now=later(settings.TAB_TURN_TIMEOUT + 1)) == 1
    game = Game.objects.get(public_id=body["game"])
    assert (game.status, game.ending, game.winner) == ("finished", "expired", None)
    assert Ranking.objects.count() == 0
    # The player can wait again.
    _, again = api.as_player("alice")("join", group=5, size=7)
    assert again["game"] != body["game"]


def test_many_due_games_are_swept_in_batches(db, settings):
    # Seven players waiting, each in a group of their own (an account waits in one game at a time).
    for group in range(1, 8):
        tab_join(user_id=UserFactory(username=f"lonely{group}").pk, group=group, size=7)
    assert game_expire_due(now=later(settings.TAB_TURN_TIMEOUT + 1), limit=3) == 3
    assert game_expire_due(now=later(settings.TAB_TURN_TIMEOUT + 1), limit=3) == 3
    assert game_expire_due(now=later(settings.TAB_TURN_TIMEOUT + 1), limit=3) == 1
    assert not Game.objects.exclude(status=Game.Status.FINISHED).exists()


def test_an_outage_of_ours_stops_the_turn_clocks(db, settings):
    settings.TAB_OUTAGE_GRACE = 10
    ann, ben, cat, dan = (UserFactory(username=nick) for nick in ("ann", "ben", "cat", "dan"))
    with time_machine.travel(datetime(2026, 3, 1, 12, tzinfo=UTC), tick=False) as clock:
        assert outage_bridge() is None  # the first sweep ever: it only notes that it ran
        game = tab_join(user_id=ann.pk, group=1, size=7)
        tab_join(user_id=ben.pk, group=1, size=7)
        overdue = tab_join(user_id=cat.pk, group=2, size=7)
        tab_join(user_id=dan.pk, group=2, size=7)
        # Played, and due a second ago, when the server went down before sweeping it: it stays due.
        Game.objects.filter(pk=overdue.pk).update(
            deadline=timezone.now() - timedelta(seconds=1), acted_at=timezone.now() - timedelta(seconds=30)
        )
        deadline = Game.objects.get(pk=game.pk).deadline

        clock.shift(600)  # ten minutes without a sweep: no server ran, or the database was unreachable
        assert outage_bridge() == timedelta(seconds=600)
        assert Game.objects.get(pk=game.pk).deadline == deadline + timedelta(seconds=600)
        assert outage_bridge() is None  # made good once, whatever the number of processes
        assert game_expire_due() == 1
        assert Game.objects.get(pk=overdue.pk).ending == "timeout"
        assert Game.objects.get(pk=game.pk).status == "playing"

        # Sweeps a few seconds apart (a busy machine) are no outage.
        clock.shift(5)
        assert outage_bridge() is None
        assert Game.objects.get(pk=game.pk).deadline == deadline + timedelta(seconds=600)


def test_a_grace_shorter_than_the_sweeps_own_gaps_never_stops_the_clocks(db, settings):
    settings.TAB_OUTAGE_GRACE = 1
    ann, ben = UserFactory(username="ann"), UserFactory(username="ben")
    with time_machine.travel(datetime(2026, 3, 1, 12, tzinfo=UTC), tick=False) as clock:
        assert outage_bridge() is None
        game = tab_join(user_id=ann.pk, group=1, size=7)
        tab_join(user_id=ben.pk, group=1, size=7)
        deadline = Game.objects.get(pk=game.pk).deadline
        # Marks a second and a half apart, as a sweeper leaves them: no outage, however short the grace.
        for _ in range(5):
            clock.shift(1.5)
            assert outage_bridge() is None
        assert Game.objects.get(pk=game.pk).deadline == deadline


def test_a_long_run_of_expiries_is_no_outage(db, settings):
    """Games falling due by the thousand keep the sweeper busy for seconds: it notes between its batches that it runs,
    so the next tick takes none of that time for an outage, and the deadlines still ahead stay where they are."""
    from django.db import connection

    from games import sweeper

    settings.TAB_OUTAGE_GRACE = 10
    settings.TAB_TURN_TIMEOUT = 3600
    with time_machine.travel(datetime(2026, 3, 1, 12, tzinfo=UTC), tick=False) as clock:
        sweeper.mark_swept()
        ahead = tab_join(user_id=UserFactory(username="ann").pk, group=1, size=7)
        tab_join(user_id=UserFactory(username="ben").pk, group=1, size=7)
        deadline = Game.objects.get(pk=ahead.pk).deadline
        # A hundred players waiting alone, each in a group of their own, all due now.
        for group in range(2, 102):
            tab_join(user_id=UserFactory(username=f"lonely{group}").pk, group=group, size=7)
        Game.objects.exclude(pk=ahead.pk).update(deadline=timezone.now())

        def slowly(execute, sql, params, many, context):
            # Each game ended takes the sweeper a fifth of a second: a batch of 25 five seconds, all of them twenty.
            if f'INSERT INTO "{GameEvent._meta.db_table}"' in sql:  # alone, or with its game's UPDATE
                clock.shift(0.2)
            return execute(sql, params, many, context)

        started_at = timezone.now()
        with connection.execute_wrapper(slowly):
            sweeper.expire_due()
        assert timezone.now() - started_at == timedelta(seconds=20)
        assert Game.objects.filter(status=Game.Status.FINISHED).count() == 100
        sweeper.mark_swept()  # the next tick
        assert Game.objects.get(pk=ahead.pk).deadline == deadline
