"""The project's settings with the tests' sample line protocol installed (tests/sample_protocol)."""

from tabsite.settings import *  # noqa: F403
from tabsite.settings import INSTALLED_APPS

INSTALLED_APPS = [*INSTALLED_APPS, "tests.sample_protocol"]
