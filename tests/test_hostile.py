"""Hostile input beyond what the fuzzing covers: the nick rule at register, bodies over the size limit, and paths and
methods the API does not have. Every answer is a JSON error, and nothing is written."""

import pytest
from django.contrib.auth import get_user_model

from .factories import UserFactory

pytestmark = pytest.mark.django_db

User = get_user_model()

NICK_RULE = "Invalid nick: a nick is 1 to 32 letters, digits, '.', '_' or '-'"


@pytest.mark.parametrize(
    "nick", ["zp", "jpleal", "Élodie", "张伟", "Jürgen_2", "a.b-c_d", "0", "x" * 32, "ΑΒΓ", "иван", "_-."]
)
def test_register_accepts_nicks_of_letters_digits_and_dot_underscore_dash(api, nick):
    assert api("register", {"nick": nick, "password": "secret"}) == (200, {})
    assert User.objects.filter(username=nick).exists()


@pytest.mark.parametrize(
    "nick", ["a b", " zp", "zp ", "a@b", "a+b", "<script>", "a/b", "🎲", "tab\t", "x\ny", "e\u0301", "a'b", "%41"]
)
def test_register_refuses_other_nicks_with_the_rule(api, nick):
    assert api("register", {"nick": nick, "password": "secret"}) == (400, {"error": NICK_RULE})
    assert not User.objects.exists()


def test_accounts_older_than_the_rule_keep_working(api):
    UserFactory(username="old timer", password="secret")
    assert api("register", {"nick": "old timer", "password": "secret"}) == (200, {})
    assert api("register", {"nick": "old timer", "password": "wrong"}) == (
        401,
        {"error": "User registered with a different password"},
    )
    status, body = api("join", {"nick": "old timer", "password": "secret", "group": 1, "size": 9})
    assert status == 200 and "game" in body


def test_other_functions_answer_unknown_nicks_as_before(api):
    for nick in ("nobody", "a b", "🎲"):
        assert api("join", {"nick": nick, "password": "secret", "group": 1, "size": 9}) == (
            401,
            {"error": "User not registered"},
        )


@pytest.mark.parametrize("function", ["register", "join", "notify"])
def test_a_body_over_64_kib_is_refused_with_413(api, settings, function):
    assert settings.TAB_MAX_BODY_BYTES == 64 * 1024
    start, end = b'{"nick": "zp", "password": "secret"', b"}"
    fits = start + b" " * (64 * 1024 - len(start) - len(end)) + end
    assert api(function, raw=fits)[0] != 413
    users = User.objects.count()
    status, body = api(function, raw=fits[:-1] + b" }")
    assert (status, list(body)) == (413, ["error"]) and body["error"] == "Request body too large"
    assert User.objects.count() == users
