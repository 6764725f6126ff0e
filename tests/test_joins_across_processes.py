"""Two joins of one account at once, as two server processes would make them (each its own connection and
transaction): the account still waits in one match only. PostgreSQL only: on SQLite a process's database thread
runs one call at a time and the database takes one writer at a time, so joins cannot interleave."""

import threading

import pytest
from django.contrib.auth import get_user_model
from django.db import connection, transaction

from games.models import Game

from .conftest import tab_join
from .factories import UserFactory

pytestmark = pytest.mark.django_db(transaction=True)


def test_two_simultaneous_joins_of_one_account_leave_it_waiting_in_one_match():
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL: SQLite takes one writer at a time")
    zp = UserFactory(username="zp")
    other = {}

    def join_elsewhere() -> None:
        try:
            other["game"] = tab_join(user_id=zp.pk, group=6, size=9)
        finally:
            from django.db import connections

            connections.close_all()

    with transaction.atomic():
        first = tab_join(user_id=zp.pk, group=5, size=9)
        # Another process joins group 6 while this join is not committed yet: it must wait for it, then see it.
        thread = threading.Thread(target=join_elsewhere)
        thread.start()
        thread.join(timeout=2)
        waited = thread.is_alive()
    thread.join(30)
    assert not thread.is_alive()
    assert waited, "the second join went ahead of the first's commit"
    assert list(Game.objects.filter(status="waiting").values_list("pool", flat=True)) == ["6"]
    assert Game.objects.get(pk=first.pk).ending == "cancelled"
    assert get_user_model().objects.count() == 1
