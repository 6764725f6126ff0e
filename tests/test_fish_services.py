"""Fish tournaments on the platform, through their services: seats, the match they make, removals in the log and in
replays, results and rankings, and the admin."""

import pytest
from django.db import connection
from django.utils import timezone

from games import history
from games.models import Game, GameEvent, Seat
from games.services import game_expire_due, games_recompute
from protocols.fish import services
from protocols.fish.models import Entrant, Tournament
from protocols.fish.protocol import Fields, FishError
from rankings.models import Ranking

from .factories import UserFactory

pytestmark = pytest.mark.django_db


def join(name: str, players: int | None = None, user_id: int | None = None) -> str:
    return services.tournament_join(name=name, players=players, user_id=user_id)[0]


def act(token: str, kind: str, *values: int):
    return services.penguin_act(token=token, kind=kind, fields=Fields(values=values))


def log(game: Game) -> list[dict]:
    return list(GameEvent.objects.filter(game=game).order_by("seq").values("seq", "kind", "player", "data"))


def play_out(tokens: list[str]) -> None:
    """Play every turn with the first legal placement or move until the game is over."""
    for _ in range(200):
        found = services.reading(tokens[0]) if tokens else None
        turn = found.turn() if found else None
        if turn is None:
            return
        state = found.state
        if state.phase == "placement":
            row, col = state.legal_placements(turn)[0]
            assert not isinstance(act(tokens[turn], "place", row, col), FishError)
        else:
            move = state.legal_moves(turn)[0]
            assert not isinstance(act(tokens[turn], "move", *move.start, *move.end), FishError)
    pytest.fail("the game did not end")


def test_a_tournament_is_a_match_that_starts_with_its_last_seat():
    first = join("spring", 3)
    tournament = Tournament.objects.get(name="spring")
    game = tournament.game
    assert (game.kind, game.status, game.seat_count, game.deadline) == ("fish", Game.Status.WAITING, 3, None)
    assert game.options == {"seed": tournament.seed}
    join("spring")
    assert Game.objects.get(pk=game.pk).status == Game.Status.WAITING
    join("spring")
    game.refresh_from_db()
    assert game.status == Game.Status.PLAYING and game.deadline is not None and game.turn_seconds == 60
    # The board is the seed's, known from the first join.
    assert services.reading(first).board() == services.board_from_seed(tournament.seed)
    with pytest.raises(FishError) as full:
        join("spring")
    assert full.value.error_type == "Tournament_Error"
    assert list(Entrant.objects.filter(tournament=tournament).values_list("seat", flat=True)) == [0, 1, 2]
    # Tokens are kept hashed only.
    assert not Entrant.objects.filter(token=first).exists()


def test_removals_are_logged_replayed_and_ranked_last():
    red, white, brown = join("cup", 3), join("cup"), join("cup")
    game = Tournament.objects.get(name="cup").game
    # White plays out of turn: removed, in the same change as its refusal.
    refused = act(white, "place", 0, 0)
    assert isinstance(refused, FishError) and refused.error_type == "Invalid_Action"
    kinds = [entry["kind"] for entry in log(game)]
    assert kinds[-1] == "remove" and log(game)[-1]["data"]["why"] == "rule"
    play_out([red, white, brown])
    game.refresh_from_db()
    assert game.status == Game.Status.FINISHED and game.ending == Game.Ending.SCORE
    ranks = list(Seat.objects.filter(game=game).order_by("index").values_list("rank", flat=True))
    assert ranks[1] == 3 and {ranks[0], ranks[2]} <= {1, 2}
    # The log proves the result: replayed, it ends in the same ranks.
    seats = game.seat_user_ids
    outcome = history.final_outcome("fish", game.options, seats, log(game))
    assert outcome is not None and list(outcome.ranks) == ranks
    # Anonymous players of the protocol count for no ranking.
    assert not Ranking.objects.exists()
    assert games_recompute()["games"] == 0


def test_a_game_every_player_left_ends_with_no_winner():
    red, white = join("gone"), join("gone")
    act(white, "place", 0, 0)  # out of turn
    act(red, "place", 99, 0)  # off the board
    game = Tournament.objects.get(name="gone").game
    game.refresh_from_db()
    assert game.status == Game.Status.FINISHED and game.ending == Game.Ending.KICK and game.winner is None
    assert history.final_outcome("fish", game.options, game.seat_user_ids, log(game)) is None
    with pytest.raises(FishError) as gone:
        services.reading(red)
    assert gone.value.error_type == "Incorrect_Token" and "refused placement or move" in str(gone.value)


def test_the_sweeper_removes_the_player_on_turn_and_the_next_turn_begins():
    join("late")
    white = join("late")
    game = Tournament.objects.get(name="late").game
    game.refresh_from_db()
    assert game_expire_due(now=game.deadline) == 1
    game.refresh_from_db()
    assert game.status == Game.Status.PLAYING and game.deadline > timezone.now()
    assert services.reading(white).turn() == 1
    assert log(game)[-1]["kind"] == "remove" and log(game)[-1]["data"]["why"] == "timeout"


def test_a_check_or_read_after_the_deadline_sees_the_turn_timed_out_before_the_sweeper_comes():
    from protocols.fish.server import respond

    red, white = join("slow"), join("slow")
    game = Tournament.objects.get(name="slow").game
    Game.objects.filter(pk=game.pk).update(deadline=timezone.now() - timezone.timedelta(seconds=1))
    # The check says what the action would do now: red's turn is over, and red with it.
    with pytest.raises(FishError) as refused:
        respond({"action": "check_placement", "user_token": red, "row": 0, "col": 0})
    assert refused.value.error_type == "Incorrect_Token"
    assert respond({"action": "check_turn", "user_token": white}) == {"color": "white"}
    assert log(game)[-1]["kind"] == "remove" and log(game)[-1]["data"]["why"] == "timeout"
    game.refresh_from_db()
    assert game.status == Game.Status.PLAYING and game.deadline > timezone.now()


def test_signed_in_players_from_the_web_are_ranked():
    ann, ben, cat = (UserFactory(username=nick) for nick in ("ann", "ben", "cat"))
    tokens = [join("web", 3, ann.pk), join("web", None, ben.pk), join("web", None, cat.pk)]
    play_out(tokens)
    game = Tournament.objects.get(name="web").game
    game.refresh_from_db()
    assert game.pool == "web" and game.status == Game.Status.FINISHED
    assert Ranking.objects.filter(kind="fish").count() == 3
    # One account taking two seats plays the second as the anonymous account of that seat: not ranked.
    dan = UserFactory(username="dan")
    join("twice", None, dan.pk)
    join("twice", None, dan.pk)
    other = Tournament.objects.get(name="twice").game
    other.refresh_from_db()
    assert other.pool == "" and len(set(other.seat_user_ids)) == 2


def test_the_admin_lists_tournaments_and_ends_a_stuck_one(admin_client):
    join("stuck", 2)
    join("stuck")
    join("alone", 3)
    page = admin_client.get("/admin/fish/tournament/?game__status__exact=playing").content.decode()
    assert "stuck" in page and "alone" not in page
    tournament = Tournament.objects.get(name="stuck")
    response = admin_client.post(
        "/admin/fish/tournament/", {"action": "end_no_result", "_selected_action": [tournament.pk]}, follow=True
    )
    assert "1 tournament(s) ended." in response.content.decode()
    game = Game.objects.get(pk=tournament.game_id)
    assert game.status == Game.Status.FINISHED and game.ending == Game.Ending.ENDED
    assert admin_client.get(f"/admin/fish/tournament/{tournament.pk}/change/").status_code == 200


def test_the_tournaments_waiting_for_players_newest_first(client):
    join("first", 3)
    join("first")
    join("second", 2)
    join("full", 2)
    join("full")
    listed = client.get("/tables/fish/waiting").json()["tournaments"]
    assert listed == [
        {"tournament": "second", "players": 2, "joined": 1},
        {"tournament": "first", "players": 3, "joined": 2},
    ]


def test_reads_see_the_stored_position_whether_this_process_kept_it_or_not(django_capture_on_commit_callbacks):
    from games.rules.fish import ENGINE

    tokens = [join("peek", 2), join("peek")]
    with django_capture_on_commit_callbacks(execute=True):
        state = services.reading(tokens[0]).state
        row, col = state.legal_placements(0)[0]
        act(tokens[0], "place", row, col)
    game = Tournament.objects.get(name="peek").game
    stored = ENGINE.state_from_json(game.state)
    found = services.reading(tokens[1])
    assert found.position == game.state and ENGINE.state_to_json(found.state) == game.state
    # Kept where the text read back is the one written (SQLite): the reads have the very state the placement left.
    assert (services.reading(tokens[0]).state is found.state) == (connection.vendor == "sqlite")
    # Read twice, changing nothing of the position.
    assert services.reading(tokens[0]).position == game.state and stored.penguins == found.state.penguins
    # Written by another process (another text): the reads decode what is stored.
    other = stored.copy()
    other.scores[0] = 7
    Game.objects.filter(pk=game.pk).update(state=ENGINE.state_to_json(other))
    assert services.reading(tokens[1]).state.scores[0] == 7
    assert services.state_json(services.reading(tokens[0]))["players"][0]["score"] == 7
