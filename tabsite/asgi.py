"""ASGI entry point: the only way this project is served (the update streams need it), and the composition of a server
process: the web application, and what runs beside it from start-up to shutdown."""

import os

from django.core.asgi import get_asgi_application
from django.core.signals import request_finished

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tabsite.settings")

pages = get_asgi_application()

# These need the apps loaded by get_asgi_application.
from core import checkpoints, dbthread, interpreter, lineservers, server  # noqa: E402
from core.bodylimit import BodySizeLimit  # noqa: E402
from core.lifespan import Lifespan  # noqa: E402
from games import sweeper  # noqa: E402
from games.bots import runner  # noqa: E402
from protocols.course_api.handler import application_for  # noqa: E402

# The requests of Django's own handler close their connections when they end (core/dbthread.py says why).
request_finished.connect(dbthread.close_request_connections, dispatch_uid="close_request_connections")

application = Lifespan(
    BodySizeLimit(application_for(pages)),
    startup=[
        # First, before the other threads start (with TAB_DATABASE_CALLS=loop it sets an environment variable).
        dbthread.start,
        server.raise_open_files_limit,
        checkpoints.start,
        sweeper.start,
        lineservers.start_all,
        runner.resume_in_background,
        # Last: everything the process keeps for its life is loaded by now.
        interpreter.tune_for_serving,
    ],
    shutdown=[lineservers.stop_all, runner.settle_at_shutdown, checkpoints.stop],
)
