"""ASGI entry point: the only way this project is served, since the update streams need it."""

import gc
import os
import sys

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tabsite.settings")

pages = get_asgi_application()

# These need the apps loaded by get_asgi_application.
from core import dbthread  # noqa: E402
from core.bodylimit import BodySizeLimit  # noqa: E402
from games import sweeper  # noqa: E402
from protocols.course_api.handler import application_for  # noqa: E402

application = BodySizeLimit(application_for(pages))
sweeper.start()
dbthread.start()

# Everything loaded so far lives as long as the process: keep it out of the collector's passes, which otherwise walk
# it again and again. With thousands of open streams, full collections were a quarter of the server's CPU; the
# young generation's threshold is raised for the same reason (each request allocates a few thousand objects).
# The middle generation is collected every second young collection: it holds what survived them, such as the objects
# of streams being opened by the thousand, and collecting twenty young generations' survivors at once (the default
# ratio) paused the server 110-160 ms with 10,000 streams; two at a time, about 20 ms. Full collections stay rare:
# they wait for 100 middle collections (about 4 million surviving objects) and for a quarter of the old generation
# to be new.
gc.freeze()
gc.set_threshold(20_000, 2, 100)

# The database thread gives up the GIL in every SQLite call and must take it back from the event loop, which keeps it
# for up to the switch interval when busy (5 ms by default): at 400 actions/s, the p99 from a throw to both streams was
# 344 ms with 5 ms, and 8.4 ms with 1 ms, for the same CPU.
sys.setswitchinterval(0.001)
