"""ASGI entry point: the only way this project is served, since the update streams need it."""

import gc
import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tabsite.settings")

pages = get_asgi_application()

# These need the apps loaded by get_asgi_application.
from games import sweeper  # noqa: E402
from tabsite.bodylimit import BodySizeLimit  # noqa: E402
from tabsite.handlers import application_for  # noqa: E402

application = BodySizeLimit(application_for(pages))
sweeper.start()

# Everything loaded so far lives as long as the process: keep it out of the collector's passes, which otherwise walk
# it again and again. With thousands of open streams, full collections were a quarter of the server's CPU; the
# young generation's threshold is raised for the same reason (each request allocates a few thousand objects).
gc.freeze()
gc.set_threshold(20_000, 20, 20)
