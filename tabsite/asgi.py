"""ASGI entry point: the only way this project is served, since the update streams need it."""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tabsite.settings")

application = get_asgi_application()

from games import sweeper  # noqa: E402  (needs the apps loaded by get_asgi_application)

from .bodylimit import BodySizeLimit  # noqa: E402

application = BodySizeLimit(application)
sweeper.start()
