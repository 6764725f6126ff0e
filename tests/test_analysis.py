"""The analysis of finished games: each position's chances and the costliest turns, for every registered game, made
after the game and stored (games/analysis.py), shown on the game's page, and remade on demand."""

import pytest
from django.core.management import call_command

from games.analysis import analyse, analyse_pending, pending
from games.bots.analysis import LEAST_COST, MARKED, review
from games.history import replay
from games.models import Analysis, Game, GameEvent
from games.rules import ENGINES, find_engine
from games.services import match_join

from .factories import UserFactory
from .played import finished_game

KINDS = ["tab", "draughts", "plakoto", "fish"]
# Small budgets: what is tested is what an analysis says, not how deep it looks.
POSITIONS = 3_000


def entries_of(game: Game) -> list[dict]:
    return [
        {"seq": event.seq, "kind": event.kind, "player": event.player_id, "data": event.data}
        for event in game.events.order_by("seq")
    ]


@pytest.mark.django_db
@pytest.mark.parametrize("kind", KINDS)
def test_every_game_is_analysed_position_by_position_with_its_costliest_turns(kind):
    assert set(KINDS) <= set(ENGINES)
    game = finished_game(kind, seed=7, seats=3 if kind == "fish" else 2)
    entries = entries_of(game)
    result = review(game.kind, game.options, game.seat_user_ids, entries, positions=POSITIONS)

    # A chance for every position from the start on, each seat's, between 0 and 1, shared out.
    positions = [entry for entry, _ in replay(game.kind, game.options, game.seat_user_ids, entries)]
    assert [seq for seq, _ in result.chances] == [None] + [entry["seq"] for entry in positions[1:]]
    for _, chances in result.chances:
        assert len(chances) == game.seat_count
        assert all(0 <= chance <= 1 for chance in chances)
        assert sum(chances) == pytest.approx(1, abs=1e-6)
    # The game's end is certain: the winner's chance is whole, or shared by the seats that share first place. (The
    # dice the server rolled decide whether this game was won or drawn.)
    ranks = list(game.seats.order_by("index").values_list("rank", flat=True))
    first = ranks.count(1)
    assert result.chances[-1][1] == [1 / first if rank == 1 else 0 for rank in ranks]

    # At most three turns marked, the costliest first; each cost its player something, and its better turn is one
    # the rules allow from where the turn began.
    assert len(result.marks) <= MARKED
    costs = [mark.cost for mark in result.marks]
    assert costs == sorted(costs, reverse=True) and all(cost >= LEAST_COST for cost in costs)
    by_seq = {entry["seq"]: entry for entry in entries}
    for mark in result.marks:
        assert by_seq[mark.seq]["player"] == by_seq[mark.last]["player"] == game.seat_user_ids[mark.seat]
        assert mark.seq <= mark.last
        player = game.seat_user_ids[mark.seat]
        instead = [entry for entry in entries if entry["seq"] < mark.seq]
        instead += [{**turn, "seq": 10_000 + at, "player": player} for at, turn in enumerate(mark.better)]
        taken = [entry for entry in entries if entry["seq"] <= mark.last]
        assert position_after(game, instead) != position_after(game, taken)


def position_after(game: Game, entries: list[dict]) -> dict:
    """Return the position a log leads to, as JSON (the rules refuse a log they do not allow)."""
    *_, (_, state) = replay(game.kind, game.options, game.seat_user_ids, entries)
    return find_engine(game.kind).state_to_json(state)


@pytest.mark.django_db
def test_an_analysis_is_the_same_made_twice():
    game = finished_game("draughts", seed=3)
    made = [
        review(game.kind, game.options, game.seat_user_ids, entries_of(game), positions=POSITIONS, seed=1).to_json()
        for _ in range(2)
    ]
    assert made[0] == made[1]


@pytest.mark.django_db
def test_a_blunder_is_marked_with_the_move_that_was_better():
    # Black plays at random against a White that looks at its answers: Black leaves pieces hanging, and pays.
    game = finished_game("draughts", seed=11)
    result = review(game.kind, game.options, game.seat_user_ids, entries_of(game), positions=20_000)
    assert result.marks, "random play leaves something hanging"
    assert any(mark.seat == 1 for mark in result.marks)
    for mark in result.marks:
        assert mark.better and mark.better[0]["kind"] == "move" and mark.better[0]["data"]["path"]


@pytest.mark.django_db
def test_finished_games_are_analysed_once_and_shown_on_their_page(client, settings):
    settings.ANALYSIS_POSITIONS = POSITIONS
    games = [finished_game("tab", seed=5), finished_game("plakoto", seed=5)]
    waiting = match_join(user_id=UserFactory().pk, kind="tab", options={}, pool="analysis-waiting")
    assert set(pending()) == {game.pk for game in games}
    page = client.get(f"/games/{games[0].public_id}/")
    assert b"The computer is analysing this game" in page.content
    assert page.context["replay"]["analysis"] is None

    assert analyse_pending() == 2
    assert pending() == [] and analyse_pending() == 0
    assert not Analysis.objects.filter(game=waiting).exists()
    for game in games:
        analysis = Analysis.objects.get(game=game)
        assert analysis.error == "" and analysis.seconds > 0
        page = client.get(f"/games/{game.public_id}/")
        assert page.context["analysis_state"] == "made"
        assert page.context["replay"]["analysis"] == analysis.data
        assert b'id="analysis-curve"' in page.content and b'data-seq="' in page.content


@pytest.mark.django_db
def test_the_command_analyses_again_and_a_broken_log_is_said_not_crashed(client, settings):
    settings.ANALYSIS_POSITIONS = POSITIONS
    game = finished_game("draughts", seed=2)
    call_command("analyse")
    first = Analysis.objects.get(game=game)
    call_command("analyse", game.public_id)
    again = Analysis.objects.get(game=game)
    assert again.made_at > first.made_at and again.data == first.data

    # A log that cannot be replayed: the analysis says so, the page too, and the others go on.
    move = game.events.filter(kind="move").order_by("seq").first()
    GameEvent.objects.filter(pk=move.pk).update(data={"path": ["a1", "a1"]})
    analysis = analyse(game.pk)
    assert analysis.data is None and analysis.error
    assert client.get(f"/games/{game.public_id}/").context["analysis_state"] == "failed"
    with pytest.raises(Exception, match="no finished game"):
        call_command("analyse", "nosuchgame")


@pytest.mark.django_db
def test_staff_have_games_analysed_again_and_see_what_analyses_cost(admin_client, settings):
    settings.ANALYSIS_POSITIONS = POSITIONS
    game = finished_game("draughts", seed=2)
    analyse_pending()
    listed = admin_client.get("/admin/games/analysis/").content.decode()
    assert game.public_id in listed

    response = admin_client.post(
        "/admin/games/game/", {"action": "analyse_again", "_selected_action": [game.pk]}, follow=True
    )
    assert "1 game(s) will be analysed again shortly." in response.content.decode()
    # Back in the queue of the analysing process, which makes it again.
    assert pending() == [game.pk]
    assert analyse_pending() == 1 and Analysis.objects.get(game=game).data


@pytest.mark.django_db
def test_a_game_is_analysed_by_one_process_and_taken_again_if_it_stopped(client):
    from datetime import timedelta

    from games.analysis import STALE, take

    game = finished_game("draughts", seed=2)
    assert take(game.pk) and not take(game.pk)
    # Taken, in the making: nobody else's, and the page says it is coming.
    assert pending() == []
    assert client.get(f"/games/{game.public_id}/").context["analysis_state"] == "pending"
    # The process that took it stopped long ago: another takes it.
    Analysis.objects.filter(game=game).update(taken_at=Analysis.objects.get(game=game).taken_at - STALE - timedelta(1))
    assert pending() == [game.pk] and take(game.pk) and not take(game.pk)
