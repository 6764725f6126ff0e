"""GET /healthz: what a load balancer asks each server process, in-process and against a real server."""

import pytest

from .conftest import require
from .live import REDIS_TEST_URL, redis_available

pytestmark = pytest.mark.django_db

HEALTHY = {"status": "ok", "database": "ok", "redis": "not configured"}


def test_a_healthy_process_answers_200_and_is_never_cached(client):
    response = client.get("/healthz")
    assert (response.status_code, response.json()) == (200, HEALTHY)
    assert response["Cache-Control"] == "no-store"
    assert client.head("/healthz").status_code == 200


def test_only_get_and_head(client):
    for method in ("post", "put", "delete"):
        response = getattr(client, method)("/healthz")
        assert response.status_code == 405
        assert response.json() == {"error": f"Method {method.upper()} not allowed: use GET"}


def test_a_probe_by_address_over_plain_http_is_answered(client, settings):
    # Balancers probe each instance at its own address, without TLS, whatever the site's host names and HTTPS.
    settings.SECURE_SSL_REDIRECT = True
    response = client.get("/healthz", headers={"host": "10.0.0.7:8008"})
    assert (response.status_code, response.json()) == (200, HEALTHY)
    assert client.get("/rankings/", headers={"host": "10.0.0.7:8008"}).status_code == 400


def test_redis_unreachable_makes_the_process_unhealthy(client, settings):
    settings.REDIS_URL = "redis://127.0.0.1:1/0"
    response = client.get("/healthz")
    assert response.status_code == 503
    assert response.json() == {"status": "unavailable", "database": "ok", "redis": "unavailable"}


@pytest.mark.redis
def test_with_redis_reachable(client, settings):
    require(redis_available(), "Redis")
    settings.REDIS_URL = REDIS_TEST_URL
    assert client.get("/healthz").json() == {"status": "ok", "database": "ok", "redis": "ok"}


@pytest.mark.server
def test_a_real_server_answers_through_its_database_thread(start_server):
    server = start_server()
    response = server.http.get("/healthz", headers={"host": "192.0.2.1"})
    assert (response.status_code, response.json()) == (200, HEALTHY)
