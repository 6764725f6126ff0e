"""games/store.py builds an action's three statements itself: they must read and write exactly what the ORM would.
Run on SQLite and on PostgreSQL, as the whole suite is."""

from datetime import UTC, datetime

import pytest
from django.db import transaction

from games import store
from games.models import Game, GameEvent, Seat
from games.rules import tab

pytestmark = pytest.mark.django_db

COMPARED = [field.attname for field in Game._meta.concrete_fields if field.attname not in ("id", "public_id")]


def twins(alice, bob) -> tuple[Game, Game]:
    """Two games alike in every column but their keys."""
    made = [Game.objects.create(options={"size": 9}, variant="9", pool="3", version=4) for _ in range(2)]
    for game in made:
        Seat.objects.bulk_create([Seat(game=game, index=0, user=alice), Seat(game=game, index=1, user=bob)])
    Game.objects.filter(pk__in=[game.pk for game in made]).update(created_at=datetime(2026, 2, 1, tzinfo=UTC))
    return Game.objects.get(pk=made[0].pk), Game.objects.get(pk=made[1].pk)


def row(game: Game) -> dict:
    return {name: value for name, value in Game.objects.filter(pk=game.pk).values(*COMPARED).get().items()}


def test_the_locked_game_is_the_game_the_orm_reads(alice, bob):
    game, _ = twins(alice, bob)
    Game.objects.filter(pk=game.pk).update(state=tab.State.new(9).to_json(), deadline=datetime(2026, 3, 1, tzinfo=UTC))
    with transaction.atomic():
        locked = store.game_locked(game.public_id)
    orm = Game.objects.get(pk=game.pk)
    assert [getattr(locked, name) for name in ("id", "public_id", *COMPARED)] == [
        getattr(orm, name) for name in ("id", "public_id", *COMPARED)
    ]
    assert locked.seat_user_ids == [alice.pk, bob.pk] == orm.seat_user_ids
    assert store.game_locked("no such game") is None


def test_an_action_writes_the_row_the_orm_would(alice, bob):
    ours, theirs = twins(alice, bob)
    with transaction.atomic():
        ours = store.game_locked(ours.public_id)
    state = tab.State.new(9)
    state.throw(tab.Throw.of_value(1))
    now = datetime(2026, 3, 1, 12, 30, 15, 123456, tzinfo=UTC)
    for game in (ours, theirs):
        game.status, game.state, game.version = Game.Status.FINISHED, state.to_json(), 5
        game.deadline, game.winner, game.ending = now, bob, Game.Ending.WIN
        game.started_at = game.finished_at = now
    store.game_save(ours)
    theirs.save()
    assert row(ours) == row(theirs)
    # Only what changed is written: a change made meanwhile to another column stays.
    Game.objects.filter(pk=ours.pk).update(pool="77")
    ours.version = 6
    store.game_save(ours)
    assert Game.objects.values_list("pool", "version").get(pk=ours.pk) == ("77", 6)


def test_a_log_entry_is_the_row_the_orm_would_insert(alice, bob):
    game, _ = twins(alice, bob)
    at = datetime(2026, 3, 1, 12, 30, 15, 123456, tzinfo=UTC)
    data = {"sticks": [True, False, True, False], "value": 2, "note": "ção"}
    store.event_pending(game=game, kind="throw", player_id=alice.pk, data=data, at=at)
    store.events_write(game)
    ours = GameEvent.objects.get(game=game, seq=game.version)
    theirs = GameEvent.objects.create(game=game, seq=game.version + 1, kind="throw", player_id=alice.pk, data=data)
    GameEvent.objects.filter(pk=theirs.pk).update(created_at=at)
    theirs.refresh_from_db()
    fields = ("game_id", "kind", "player_id", "data", "created_at")
    assert [getattr(ours, name) for name in fields] == [getattr(theirs, name) for name in fields]
    assert (ours.seq, ours.data, ours.created_at) == (game.version, data, at)


def test_an_actions_log_entries_and_its_row_are_written_as_the_orm_would(alice, bob):
    """An action's entries and its game's row go together (on PostgreSQL in one statement)."""
    ours, theirs = twins(alice, bob)
    with transaction.atomic():
        ours = store.game_locked(ours.public_id)
    at = datetime(2026, 3, 1, 12, 30, 15, 123456, tzinfo=UTC)
    entries = [("throw", alice.pk, {"value": 2, "note": "ção"}), ("pass", None, {}), ("throw", bob.pk, {"value": 6})]
    for seq, (kind, player, data) in enumerate(entries, start=5):
        ours.version = seq
        store.event_pending(game=ours, kind=kind, player_id=player, data=data, at=at)
        theirs_entry = GameEvent.objects.create(game=theirs, seq=seq, kind=kind, player_id=player, data=data)
        GameEvent.objects.filter(pk=theirs_entry.pk).update(created_at=at)
    ours.version = theirs.version = 8
    ours.status = theirs.status = Game.Status.PLAYING
    store.game_save(ours)
    theirs.save()
    assert row(ours) == row(theirs)
    fields = ("seq", "kind", "player_id", "data", "created_at")
    logged = [GameEvent.objects.filter(game=game).order_by("seq").values_list(*fields) for game in (ours, theirs)]
    assert list(logged[0]) == list(logged[1]) and len(logged[0]) == 3
    # Nothing pending is written twice.
    ours.version = 9
    store.game_save(ours)
    assert GameEvent.objects.filter(game=ours).count() == 3


def test_a_game_saved_with_nothing_changed_writes_only_its_pending_log_entries(alice, bob):
    game, _ = twins(alice, bob)
    before = row(game)
    with transaction.atomic():
        locked = store.game_locked(game.public_id)
        store.game_save(locked)
    assert row(game) == before
    at = datetime(2026, 3, 1, 12, 30, 15, tzinfo=UTC)
    with transaction.atomic():
        locked = store.game_locked(game.public_id)
        store.event_pending(game=locked, kind="note", player_id=None, data={"n": 1}, at=at)
        store.game_save(locked)
    assert row(game) == before
    assert list(GameEvent.objects.filter(game=game).values_list("seq", "kind", "data")) == [(4, "note", {"n": 1})]


def test_the_seats_of_a_started_game_are_read_once(alice, bob, django_assert_num_queries):
    game, waiting = twins(alice, bob)
    Game.objects.filter(pk=game.pk).update(status=Game.Status.PLAYING)
    with transaction.atomic():
        with django_assert_num_queries(2):  # the game, then its seats
            assert store.game_locked(game.public_id).seat_user_ids == [alice.pk, bob.pk]
        with django_assert_num_queries(1):  # taken for good: remembered
            assert store.game_locked(game.public_id).seat_user_ids == [alice.pk, bob.pk]
        # While a game waits, its seats may change: they are read each time.
        for _ in range(2):
            with django_assert_num_queries(2):
                store.game_locked(waiting.public_id)


def test_a_games_log_is_read_through_the_index_of_its_order(alice, bob):
    game, _ = twins(alice, bob)
    log = GameEvent.objects.filter(game=game).order_by("seq")
    if transaction.get_connection().vendor == "postgresql":
        with transaction.atomic():  # a table of a few rows is scanned otherwise, index or not
            with transaction.get_connection().cursor() as cursor:
                cursor.execute("SET LOCAL enable_seqscan = off")
            plan = log.explain()
        assert "game_event_seq_unique" in plan, plan
    else:
        plan = log.explain()
        assert "USING INDEX sqlite_autoindex_games_gameevent_1 (game_id=?)" in plan, plan


# A batch of actions in several games locks them with its first locking read (on PostgreSQL: `locked_together`).


def _act(public_id: str, user_id: int) -> str:
    """The action of the player on turn, as a database call: its game told by its first argument."""
    from games import services

    state = tab.ENGINE.state_from_json(Game.objects.values_list("state", flat=True).get(public_id=public_id))
    action = tab.ENGINE.legal_actions(state, tab.ENGINE.to_act(state))[0]
    return services.game_act(public_id=public_id, user_id=user_id, action=action).played.kind


def _batch(calls: list) -> list:
    """Run (function, *args) calls as one batch of the database thread's, in this thread; return their outcomes."""
    import asyncio

    from core.dbthread import Call, DatabaseThread

    loop = asyncio.new_event_loop()
    try:
        batch = [Call(function, tuple(args), {}, loop.create_future(), loop) for function, *args in calls]
        DatabaseThread().run_around(batch)
        return [call.outcome[1] for call in batch]
    finally:
        loop.close()


@pytest.mark.django_db(transaction=True)
def test_a_batch_of_actions_in_several_games_locks_them_with_one_read(alice, bob, charlie, monkeypatch):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from games import services

    monkeypatch.setitem(store._games_of, _act, lambda args, kwargs: args[0])
    games = []
    for first, second in ((alice, bob), (charlie, bob), (alice, charlie)):
        opened = services.match_open(kind="tab", options={"size": 7}, user_ids=[first.pk, second.pk], pool="3")
        game = services.match_start(public_id=opened.public_id, user_id=second.pk)
        on_turn, waiting = (first, second) if game.seat_user_ids[0] == first.pk else (second, first)
        games.append((game.public_id, on_turn.pk, waiting.pk, game.version))
    calls = [(_act, public_id, on_turn) for public_id, on_turn, _, _ in games]
    # The first game's waiting player too, after its player on turn: refused, from a read of its own after that
    # action (the row as the batch left it), not from the batch's first read.
    calls.append((_act, games[0][0], games[0][2]))
    with CaptureQueriesContext(connection) as queries:
        outcomes = _batch(calls)
    assert outcomes[:3] == ["throw"] * 3
    assert isinstance(outcomes[3], services.NotYourTurn)
    for public_id, _, _, version in games:
        assert Game.objects.get(public_id=public_id).version == version + 1
    locking = [query["sql"] for query in queries if "FOR UPDATE" in query["sql"] or "ANY(" in query["sql"]]
    if connection.vendor == "postgresql":
        assert len(locking) == 2 and "ANY(" in locking[0] and "ANY(" not in locking[1]
    # A batch with a call that is no action reads each game alone.
    monkeypatch.delitem(store._games_of, _act)
    with CaptureQueriesContext(connection) as queries:
        outcomes = _batch([(_act, public_id, on_turn) for public_id, on_turn, _, _ in games[1:]])
    assert all(isinstance(outcome, str) for outcome in outcomes), outcomes  # each the action after the throw
    assert not any("ANY(" in query["sql"] for query in queries)


def test_the_course_api_tells_the_game_of_its_actions():
    from games.services import game_act, match_join
    from protocols.course_api import api

    assert store._games_of[api._as_remembered_player] is api.game_acted_in
    assert api.game_acted_in((("nick", "pw"), game_act, {"public_id": "g1", "kind": "tab"}), {}) == "g1"
    assert api.game_acted_in((("nick", "pw"), match_join, {"kind": "tab"}), {}) is None
