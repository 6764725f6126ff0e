"""ASGI entry point: the only way this project is served, since the update streams need it."""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tabsite.settings")

pages = get_asgi_application()

# These need the apps loaded by get_asgi_application.
from games import sweeper  # noqa: E402
from tabsite.handlers import application_for  # noqa: E402

application = application_for(pages)
sweeper.start()
