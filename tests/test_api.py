"""The course protocol through its HTTP API, as a client sees it: every example of the seed's Examples section,
then each function's bad arguments, wrong methods and outsiders."""

import pytest
from django.contrib.auth import get_user_model

from games.models import Game, GameEvent, WaitingRoom
from games.rules import tab
from games.rules.tab import Piece, Throw
from games.services import rooms_clean

pytestmark = pytest.mark.django_db

User = get_user_model()


def game_of(public_id: str) -> Game:
    return Game.objects.get(public_id=public_id)


def state_of(public_id: str) -> tab.State:
    return tab.State.from_json(game_of(public_id).state)


def arrange(public_id: str, state: tab.State) -> None:
    """Put a game in a position, as if it had been played to it."""
    Game.objects.filter(public_id=public_id).update(state=state.to_json())


def with_dice(public_id: str, value: int, **changes) -> tab.State:
    state = state_of(public_id)
    state.dice = Throw.of_value(value)
    for name, change in changes.items():
        setattr(state, name, change)
    arrange(public_id, state)
    return state


@pytest.fixture
def zp_and_jpleal(api):
    """The seed's two players, registered."""
    assert api("register", {"nick": "zp", "password": "secret"}) == (200, {})
    assert api("register", {"nick": "jpleal", "password": "another"}) == (200, {})

    def call(nick: str, function: str, **payload):
        password = {"zp": "secret", "jpleal": "another"}[nick]
        return api(function, {"nick": nick, "password": password, **payload})

    return call


@pytest.fixture
def started(zp_and_jpleal):
    """A game of size 9 in group 99: zp waited first, so zp is the initial player and on turn."""
    play = zp_and_jpleal
    status, body = play("zp", "join", group=99, size=9)
    assert status == 200
    assert play("jpleal", "join", group=99, size=9) == (200, body)
    return play, body["game"]


# --- Register ---------------------------------------------------------------------------------------------------


def test_register_examples(api):
    assert api("register", {"nick": "zp", "password": "secret"}) == (200, {})
    assert api("register", {"nick": "zp", "password": "just checking"}) == (
        401,
        {"error": "User registered with a different password"},
    )
    assert api("register", {"nick": "zp", "password": "secret"}) == (200, {})
    assert api("register", {"nick": "jpleal", "password": "another"}) == (200, {})
    assert User.objects.count() == 2


def test_register_stores_only_a_password_hash(api):
    api("register", {"nick": "zp", "password": "secret"})
    stored = User.objects.get(username="zp").password
    assert "secret" not in stored
    assert stored.startswith("md5$")  # the hasher the tests use; production uses Argon2


@pytest.mark.parametrize(
    ("payload", "error"),
    [
        ({}, "undefined nick"),
        ({"nick": "zp"}, "undefined password"),
        ({"password": "secret"}, "undefined nick"),
        ({"nick": 7, "password": "secret"}, "invalid nick '7'"),
        ({"nick": "", "password": "secret"}, "invalid nick ''"),
        ({"nick": "zp", "password": ["secret"]}, "invalid password '[\"secret\"]'"),
        ({"nick": "x" * 33, "password": "secret"}, f"invalid nick '{'x' * 33}'"),
        ({"nick": "x" * 99, "password": "secret"}, f"invalid nick '{'x' * 37}...'"),
    ],
)
def test_register_bad_arguments(api, payload, error):
    assert api("register", payload) == (400, {"error": error})
    assert User.objects.count() == 0


# --- Start ------------------------------------------------------------------------------------------------------


def test_start_examples(zp_and_jpleal, client):
    play = zp_and_jpleal
    assert play("zp", "join", group=99) == (400, {"error": "undefined size"})
    assert play("zp", "join", group=99, size="large") == (400, {"error": "invalid size 'large'"})
    status, body = play("zp", "join", group=99, size=9)
    assert status == 200 and len(body["game"]) >= 32
    response = client.get("/update", {"nick": "zp", "game": "averseda"})
    assert response.status_code == 400
    assert response.json() == {"error": "Invalid game reference"}
    assert play("jpleal", "join", group=99, size=9) == (200, body)
    game = game_of(body["game"])
    assert game.status == Game.Status.PLAYING
    assert [player.username for player in game.players] == ["zp", "jpleal"]
    assert [event.kind for event in game.events.all()] == ["create", "start"]


@pytest.mark.parametrize("size", [7, 9, 11, 13, 15, "9", 9.0])
def test_join_accepts_every_board_size(zp_and_jpleal, size):
    status, body = zp_and_jpleal("zp", "join", group=1, size=size)
    assert status == 200
    assert game_of(body["game"]).options == {"size": int(size)}


@pytest.mark.parametrize(
    ("payload", "error"),
    [
        ({"size": 9}, "undefined group"),
        ({"group": "a", "size": 9}, "invalid group 'a'"),
        ({"group": 0, "size": 9}, "invalid group '0'"),
        ({"group": True, "size": 9}, "invalid group 'true'"),
        ({"group": 99, "size": 8}, "invalid size '8'"),
        ({"group": 99, "size": 5}, "invalid size '5'"),
        ({"group": 99, "size": 17}, "invalid size '17'"),
        ({"group": 99, "size": 9.5}, "invalid size '9.5'"),
        ({"group": 99, "size": None}, "undefined size"),
    ],
)
def test_join_bad_arguments(zp_and_jpleal, payload, error):
    assert zp_and_jpleal("zp", "join", **payload) == (400, {"error": error})
    assert Game.objects.count() == 0


def test_join_authentication(api, zp_and_jpleal):
    assert api("join", {"group": 1, "size": 9, "nick": "zp", "password": "wrong"}) == (
        401,
        {"error": "User registered with a different password"},
    )
    assert api("join", {"group": 1, "size": 9, "nick": "nobody", "password": "x"}) == (
        401,
        {"error": "User not registered"},
    )
    assert Game.objects.count() == 0


def test_join_again_while_waiting_gets_the_same_game(zp_and_jpleal):
    first = zp_and_jpleal("zp", "join", group=5, size=9)
    assert zp_and_jpleal("zp", "join", group=5, size=9) == first
    assert Game.objects.count() == 1


def test_joining_elsewhere_withdraws_from_the_game_waited_in(zp_and_jpleal, api):
    _, first = zp_and_jpleal("zp", "join", group=5, size=9)
    _, second = zp_and_jpleal("zp", "join", group=6, size=9)
    withdrawn = game_of(first["game"])
    assert (withdrawn.status, withdrawn.ending, withdrawn.winner) == ("finished", "cancelled", None)
    assert [event.kind for event in withdrawn.events.all()] == ["create", "leave"]
    # Whoever comes to group 5 now waits, and is not paired with zp, who waits in group 6 only.
    _, third = zp_and_jpleal("jpleal", "join", group=5, size=9)
    assert third["game"] not in (first["game"], second["game"])
    assert game_of(second["game"]).status == game_of(third["game"]).status == "waiting"
    assert Game.objects.filter(status="waiting").count() == 2


def test_waiting_rooms_where_nobody_waits_are_cleaned_up(zp_and_jpleal):
    zp_and_jpleal("zp", "join", group=5, size=9)
    zp_and_jpleal("jpleal", "join", group=5, size=9)
    zp_and_jpleal("zp", "join", group=6, size=9)
    assert WaitingRoom.objects.count() == 2
    assert rooms_clean() == 1
    assert list(WaitingRoom.objects.values_list("pool", flat=True)) == ["6"]
    # The next join makes the room again, and pairs as ever.
    _, waiting = zp_and_jpleal("jpleal", "join", group=6, size=9)
    assert game_of(waiting["game"]).status == "playing"


def test_pairing_is_per_group_and_size(zp_and_jpleal):
    _, a = zp_and_jpleal("zp", "join", group=5, size=9)
    _, b = zp_and_jpleal("jpleal", "join", group=5, size=11)
    _, c = zp_and_jpleal("jpleal", "join", group=6, size=9)
    assert len({a["game"], b["game"], c["game"]}) == 3
    # jpleal waits in group 6 now (joining there withdrew them from group 5, size 11).
    assert [game_of(game["game"]).status for game in (a, b, c)] == ["waiting", "finished", "waiting"]


def test_game_ids_are_random_and_long(zp_and_jpleal):
    ids = {zp_and_jpleal("zp", "join", group=group, size=9)[1]["game"] for group in range(1, 6)}
    assert len(ids) == 5
    assert all(len(game_id) == 32 and int(game_id, 16) >= 0 for game_id in ids)


# --- Leave ------------------------------------------------------------------------------------------------------


def test_leave_while_waiting_ends_without_winner(zp_and_jpleal):
    _, body = zp_and_jpleal("zp", "join", group=99, size=9)
    assert zp_and_jpleal("zp", "leave", game=body["game"]) == (200, {})
    game = game_of(body["game"])
    assert (game.status, game.winner, game.ending) == ("finished", None, "cancelled")
    # A new join creates a new game.
    _, again = zp_and_jpleal("zp", "join", group=99, size=9)
    assert again["game"] != body["game"]


def test_leave_during_game_gives_the_opponent_the_victory(started, api):
    play, game_id = started
    assert play("zp", "roll", game=game_id) == (200, {})
    assert play("zp", "leave", game=game_id) == (200, {})
    game = game_of(game_id)
    assert (game.status, game.winner.username, game.ending) == ("finished", "jpleal", "leave")
    assert play("zp", "leave", game=game_id) == (400, {"error": "The game is over"})
    assert api("ranking", {"group": 99, "size": 9}) == (
        200,
        {"ranking": [{"nick": "jpleal", "victories": 1, "games": 1}, {"nick": "zp", "victories": 0, "games": 1}]},
    )


def test_leave_refusals(started, charlie, api):
    play, game_id = started
    assert play("zp", "leave") == (400, {"error": "undefined game"})
    assert play("zp", "leave", game="averseda") == (400, {"error": "Invalid game reference"})
    assert play("zp", "leave", game=12) == (400, {"error": "invalid game '12'"})
    assert api("leave", {"nick": "charlie", "password": "charlie-secret", "game": game_id}) == (
        400,
        {"error": "You are not a player of this game"},
    )
    assert api("leave", {"nick": "zp", "password": "nope", "game": game_id}) == (
        401,
        {"error": "User registered with a different password"},
    )
    assert game_of(game_id).status == Game.Status.PLAYING


def test_the_course_api_knows_no_game_of_another_kind(zp_and_jpleal, client):
    """Both players of a Fish tournament (signed in from the web) are course API users too: its functions and stream
    must not reach the tournament."""
    from protocols.fish import services as fish

    play = zp_and_jpleal
    users = get_user_model().objects
    for nick in ("zp", "jpleal"):
        fish.tournament_join(name="cup", players=2 if nick == "zp" else None, user_id=users.get(username=nick).pk)
    game = Game.objects.get(kind="fish")
    assert game.status == Game.Status.PLAYING
    refused = (400, {"error": "Invalid game reference"})
    for function, arguments in (("roll", {}), ("pass", {}), ("notify", {"cell": 0}), ("leave", {})):
        assert play("zp", function, game=game.public_id, **arguments) == refused, function
    assert client.get("/update", {"nick": "zp", "game": game.public_id}).json() == refused[1]
    after = Game.objects.get(pk=game.pk)
    assert (after.status, after.version, after.state) == (game.status, game.version, game.state)


# --- Throw ------------------------------------------------------------------------------------------------------


def test_throw_examples(started):
    play, game_id = started
    assert play("jpleal", "roll", game=game_id) == (400, {"error": "Not your turn to play"})
    assert play("zp", "roll", game=game_id) == (200, {})
    state = state_of(game_id)
    assert state.dice is not None and state.turn == tab.BLUE
    # At the start only a tâb (1) moves a piece; 4 and 6 throw again; 2 and 3 must pass.
    assert bool(state.legal_moves()) == (state.dice.value == 1)
    assert state.must_pass == (state.dice.value in (2, 3))
    event = game_of(game_id).events.get(kind="throw")
    assert event.data == {"sticks": list(state.dice.sticks), "value": state.dice.value}


def test_throw_again_after_a_6_without_moves(started):
    play, game_id = started
    with_dice(game_id, 6)
    assert play("zp", "pass", game=game_id) == (400, {"error": "You already rolled the dice but can roll it again"})
    assert play("zp", "roll", game=game_id) == (200, {})


def test_no_second_throw_while_a_move_is_possible(started):
    play, game_id = started
    with_dice(game_id, 1)
    assert play("zp", "roll", game=game_id) == (400, {"error": "You already rolled the dice and have valid moves"})
    assert play("zp", "pass", game=game_id) == (400, {"error": "You already rolled the dice and have valid moves"})
    assert state_of(game_id).dice == Throw.of_value(1)


# --- Pass -------------------------------------------------------------------------------------------------------


def test_pass_examples(started):
    play, game_id = started
    with_dice(game_id, 2)
    assert play("jpleal", "pass", game=game_id) == (400, {"error": "Not your turn to play"})
    assert play("zp", "roll", game=game_id) == (400, {"error": "You already rolled the dice and must pass"})
    assert play("zp", "pass", game=game_id) == (200, {})
    state = state_of(game_id)
    assert (state.turn, state.dice) == (tab.RED, None)
    assert play("jpleal", "pass", game=game_id) == (400, {"error": "You must roll the dice first"})


# --- Move -------------------------------------------------------------------------------------------------------


def test_move_invalid_plays(started):
    play, game_id = started
    with_dice(game_id, 1)
    assert play("jpleal", "notify", game=game_id, cell=26) == (400, {"error": "not your turn to play"})
    assert play("zp", "notify", game=game_id, cell=True) == (400, {"error": "cell is not an integer"})
    assert play("zp", "notify", game=game_id, cell=-1) == (400, {"error": "cell is negative"})
    assert play("zp", "notify", game=game_id, cell=0) == (400, {"error": "cannot capture to your own piece"})
    assert play("zp", "notify", game=game_id, cell=36) == (400, {"error": "cell is out of the board"})
    assert play("zp", "notify", game=game_id) == (400, {"error": "undefined cell"})
    before = game_of(game_id)
    assert play("zp", "notify", game=game_id, cell=8) == (200, {})
    after = game_of(game_id)
    state = tab.State.from_json(after.state)
    assert state.pieces[8] is None
    assert state.pieces[9] == Piece(tab.BLUE, in_motion=True)
    assert (state.turn, state.dice, state.step) == (tab.BLUE, None, "from")  # a tâb keeps the turn
    assert after.version == before.version + 1
    assert after.events.last().data == {"from": 8, "to": 9, "captures": False}


def test_move_begin(started):
    play, game_id = started
    with_dice(game_id, 1)
    assert play("zp", "notify", game=game_id, cell=8) == (200, {})
    with_dice(game_id, 2)
    assert play("zp", "notify", game=game_id, cell=9) == (200, {})
    state = state_of(game_id)
    assert (state.cell, state.selected, state.turn, state.dice) == (9, [9, 11], tab.RED, None)


def test_move_accepts_move_as_an_alias_of_cell(started):
    play, game_id = started
    with_dice(game_id, 1)
    assert play("zp", "notify", game=game_id, move=8) == (200, {})
    assert state_of(game_id).pieces[9] is not None


def fork_position(game_id: str) -> None:
    """zp's piece on 25 (end of row 2 ahead), a 3 thrown: it may go to 28 (row 3) or 10 (back to row 1)."""
    state = state_of(game_id)
    state.pieces = [None] * 36
    state.pieces[25] = Piece(tab.BLUE, in_motion=True)
    state.pieces[0] = None
    state.pieces[30] = Piece(tab.RED, in_motion=True)
    state.dice = Throw.of_value(3)
    arrange(game_id, state)


def test_move_choose(started):
    play, game_id = started
    fork_position(game_id)
    assert play("zp", "notify", game=game_id, cell=25) == (200, {})
    state = state_of(game_id)
    assert (state.cell, state.selected, state.step, state.turn) == (25, [28, 10], "to", tab.BLUE)
    assert play("zp", "notify", game=game_id, cell=26) == (400, {"error": "Invalid move: must play the dice's value"})
    assert play("zp", "notify", game=game_id, cell=28) == (200, {})
    state = state_of(game_id)
    assert (state.cell, state.selected, state.step, state.turn) == (25, [25, 28], "from", tab.RED)
    assert state.pieces[28] == Piece(tab.BLUE, in_motion=True, reached_last_row=True)
    kinds = [event.kind for event in game_of(game_id).events.all()]
    assert kinds[-2:] == ["select", "move"]


def test_move_rollback_selection(started):
    play, game_id = started
    fork_position(game_id)
    assert play("zp", "notify", game=game_id, cell=25) == (200, {})
    assert play("zp", "notify", game=game_id, cell=25) == (200, {})
    state = state_of(game_id)
    assert (state.step, state.turn, state.dice) == ("from", tab.BLUE, Throw.of_value(3))
    assert state.pieces[25] is not None
    assert play("zp", "notify", game=game_id, cell=25) == (200, {})
    assert state_of(game_id).step == "to"
    assert [event.kind for event in game_of(game_id).events.all()][-3:] == ["select", "deselect", "select"]


# --- Win --------------------------------------------------------------------------------------------------------


def test_win(started, api):
    play, game_id = started
    state = state_of(game_id)
    state.pieces = [None] * 36
    state.pieces[6] = Piece(tab.RED, in_motion=True, reached_last_row=True)  # Red's last row is zp's first
    state.pieces[12] = Piece(tab.BLUE, in_motion=True)
    state.pieces[30] = Piece(tab.BLUE, in_motion=True)
    state.turn = tab.RED
    state.dice = Throw.of_value(6)
    arrange(game_id, state)
    # Red on 6 (its own row 3): 6 -> 7, 8 (end of its row 3) -> 17 (its row 2 starts above) ... lands on 12.
    assert state.destinations(6, 6) == [12]
    state.pieces[30] = None
    arrange(game_id, state)
    assert play("jpleal", "notify", game=game_id, cell=6) == (200, {})
    game = game_of(game_id)
    assert (game.status, game.winner.username, game.ending) == ("finished", "jpleal", "win")
    assert play("zp", "roll", game=game_id) == (400, {"error": "The game is over"})
    assert api("ranking", {"group": 99, "size": 9})[1]["ranking"][0] == {"nick": "jpleal", "victories": 1, "games": 1}


# --- Scoreboard -------------------------------------------------------------------------------------------------


def test_scoreboard_examples(api):
    assert api("ranking", {}) == (400, {"error": "Undefined group"})
    assert api("ranking", {"group": 99}) == (400, {"error": "Invalid size 'undefined'"})
    assert api("ranking", {"group": 99, "size": 3.1416}) == (400, {"error": "Invalid size '3.1416'"})
    assert api("ranking", {"group": "2 of us", "size": 3}) == (400, {"error": "Invalid group '2 of us'"})
    assert api("ranking", {"group": 99, "size": 5}) == (200, {"ranking": []})


def test_scoreboard_after_two_games(started, api):
    play, game_id = started
    play("zp", "roll", game=game_id)
    play("zp", "leave", game=game_id)
    _, second = play("zp", "join", group=99, size=9)
    play("jpleal", "join", group=99, size=9)
    play("zp", "roll", game=second["game"])
    play("jpleal", "leave", game=second["game"])
    # Another group and size keep their own tables.
    _, third = play("zp", "join", group=98, size=9)
    play("jpleal", "join", group=98, size=9)
    play("zp", "roll", game=third["game"])
    play("jpleal", "leave", game=third["game"])
    assert api("ranking", {"group": 99, "size": 9}) == (
        200,
        {"ranking": [{"nick": "jpleal", "victories": 1, "games": 2}, {"nick": "zp", "victories": 1, "games": 2}]},
    )
    assert api("ranking", {"group": 98, "size": 9})[1]["ranking"][0] == {"nick": "zp", "victories": 1, "games": 1}
    assert api("ranking", {"group": 99, "size": 11}) == (200, {"ranking": []})


def test_scoreboard_top_ten_ordering(db, api):
    from rankings.models import Ranking

    from .factories import UserFactory

    for index, (victories, games) in enumerate([(3, 9), (5, 5), (3, 4), (0, 1)] + [(1, 2)] * 10):
        Ranking.objects.create(
            kind="tab",
            variant="9",
            pool="1",
            player=UserFactory(username=f"p{index:02}"),
            victories=victories,
            games=games,
        )
    table = api("ranking", {"group": 1, "size": 9})[1]["ranking"]
    assert len(table) == 10
    assert [row["nick"] for row in table[:4]] == ["p01", "p02", "p00", "p04"]
    assert table[-1] == {"nick": "p10", "victories": 1, "games": 2}


# --- Transport --------------------------------------------------------------------------------------------------


def test_body_is_json_whatever_the_content_type(api):
    for content_type in ("text/plain", "application/x-www-form-urlencoded", ""):
        assert api("register", raw=b'{"nick": "zp", "password": "secret"}', content_type=content_type) == (200, {})


@pytest.mark.parametrize(
    ("raw", "error"),
    [
        (b"[1, 2]", "Request body must be a JSON object"),
        (b"null", "Request body must be a JSON object"),
        (b"{nick: zp}", "Request body is not valid JSON"),
        (b"\xff\xfe", "Request body is not valid JSON"),
        (b"[" * 60_000, "Request body is not valid JSON"),
    ],
)
def test_bad_bodies(api, raw, error):
    assert api("register", raw=raw) == (400, {"error": error})


def test_cors_on_every_response_and_preflight(client):
    response = client.options(
        "/join", headers={"Origin": "http://example.com", "Access-Control-Request-Method": "POST"}
    )
    assert response.status_code == 204
    assert response["Access-Control-Allow-Origin"] == "*"
    assert "POST" in response["Access-Control-Allow-Methods"]
    assert "Content-Type" in response["Access-Control-Allow-Headers"]
    for response in (client.post("/register", "{}", content_type="text/plain"), client.get("/nothing")):
        assert response["Access-Control-Allow-Origin"] == "*"


def test_no_csrf_token_needed(db):
    from django.test import Client

    strict = Client(enforce_csrf_checks=True)
    response = strict.post("/register", '{"nick": "zp", "password": "secret"}', content_type="application/json")
    assert response.status_code == 200


def test_unknown_function_and_wrong_method(client):
    response = client.post("/dance", "{}", content_type="application/json")
    assert (response.status_code, response.json()) == (404, {"error": "Unknown function 'dance'"})
    for function in ("register", "join", "leave", "roll", "pass", "notify", "ranking"):
        response = client.get(f"/{function}")
        assert response.status_code == 405
        assert response.json() == {"error": "Method GET not allowed: use POST"}
    response = client.post("/update", "{}", content_type="application/json")
    assert (response.status_code, response.json()) == (405, {"error": "Method POST not allowed: use GET"})


def test_outsider_cannot_act(started, api, charlie):
    _, game_id = started
    for function in ("roll", "pass", "leave"):
        assert api(function, {"nick": "charlie", "password": "charlie-secret", "game": game_id}) == (
            400,
            {"error": "You are not a player of this game"},
        )
    assert GameEvent.objects.filter(game__public_id=game_id).count() == 2


def test_actions_before_the_opponent_comes(zp_and_jpleal):
    _, body = zp_and_jpleal("zp", "join", group=99, size=9)
    assert zp_and_jpleal("zp", "roll", game=body["game"]) == (
        400,
        {"error": "The game has not started: waiting for an opponent"},
    )


def test_cell_and_selected_describe_only_the_last_play(started):
    """Clients of the course server read `cell`/`selected` as "a piece was just selected or moved"."""
    from protocols.course_api.snapshots import game_message

    play, game_id = started
    with_dice(game_id, 1)
    play("zp", "notify", game=game_id, cell=8)
    message = game_message(game_of(game_id))
    assert (message["cell"], message["selected"]) == (8, [8, 9])
    play("zp", "roll", game=game_id)
    message = game_message(game_of(game_id))
    assert "cell" not in message and "selected" not in message
    with_dice(game_id, 1)
    play("zp", "notify", game=game_id, cell=9)
    play("jpleal", "leave", game=game_id)
    message = game_message(game_of(game_id))
    assert message["winner"] == "zp"
    assert "cell" not in message and "selected" not in message


def test_each_kind_of_update_message_has_exactly_its_keys(started, zp_and_jpleal):
    """The update stream's fields, kind by kind (tests/live.py checks every message the live tests receive)."""
    from protocols.course_api.snapshots import game_message

    play, game_id = started
    board = {"pieces", "initial", "players", "turn", "step", "dice", "mustPass"}

    def keys() -> set[str]:
        return set(game_message(game_of(game_id)))

    assert keys() == board  # the pairing
    fork_position(game_id)
    play("zp", "notify", game=game_id, cell=25)
    assert keys() == board | {"cell", "selected"}  # a piece selected, its destinations to choose from
    play("zp", "notify", game=game_id, cell=28)
    assert keys() == board | {"cell", "selected"}  # the move just made
    play("jpleal", "roll", game=game_id)
    message = game_message(game_of(game_id))
    assert set(message) == board and set(message["dice"]) == {"stickValues", "value", "keepPlaying"}
    assert {key for piece in message["pieces"] if piece for key in piece} == {"color", "inMotion", "reachedLastRow"}
    play("jpleal", "leave", game=game_id)
    assert keys() == board | {"winner"}  # the last message
    _, body = zp_and_jpleal("zp", "join", group=5, size=7)
    zp_and_jpleal("zp", "leave", game=body["game"])
    assert game_message(game_of(body["game"])) == {"winner": None}  # a waiting game that ended


def test_a_game_left_before_anybody_acted_counts_for_no_one(started, api):
    """The opponent wins, as the protocol says; but two accounts must not mint victories by join, join, leave."""
    from protocols.course_api.snapshots import game_message

    play, game_id = started
    assert play("jpleal", "leave", game=game_id) == (200, {})
    assert game_message(game_of(game_id))["winner"] == "zp"
    assert api("ranking", {"group": 99, "size": 9}) == (200, {"ranking": []})
