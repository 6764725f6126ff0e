"""ASGI entry point: the only way this project is served, since the update streams need it."""

import gc
import os
import sys

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tabsite.settings")

pages = get_asgi_application()

# These need the apps loaded by get_asgi_application.
from games import sweeper  # noqa: E402
from tabsite import dbthread  # noqa: E402
from tabsite.bodylimit import BodySizeLimit  # noqa: E402
from tabsite.handlers import application_for  # noqa: E402

application = BodySizeLimit(application_for(pages))
sweeper.start()
dbthread.start()

# Everything loaded so far lives as long as the process: keep it out of the collector's passes, which otherwise walk
# it again and again. With thousands of open streams, full collections were a quarter of the server's CPU; the
# young generation's threshold is raised for the same reason (each request allocates a few thousand objects).
gc.freeze()
gc.set_threshold(20_000, 20, 20)

# The database thread gives up the GIL in every SQLite call and must take it back from the event loop, which keeps it
# for up to the switch interval when busy (5 ms by default): at 400 actions/s, the p99 from a throw to both streams was
# 344 ms with 5 ms, and 8.4 ms with 1 ms, for the same CPU.
sys.setswitchinterval(0.001)
