"""A server process's start-up and shutdown, as the ASGI lifespan protocol runs them (uvicorn, gunicorn's uvicorn
workers): what every process of the platform runs beside its web requests is started here, once, on the process's
event loop, and stopped here when the process is asked to stop."""

import asyncio
import inspect
import logging
from collections.abc import Awaitable, Callable

logger = logging.getLogger(__name__)

Step = Callable[[], Awaitable[None] | None]


class Lifespan:
    """Wrap an ASGI application: run `startup` steps in order before the first request, `shutdown` steps in order at
    the end. A server that sends no lifespan events (run with lifespan off) gets the start-up at its first request."""

    def __init__(self, app, *, startup: list[Step], shutdown: list[Step]):
        self.app = app
        self.startup_steps, self.shutdown_steps = startup, shutdown
        self.started = False
        self._starting: asyncio.Lock | None = None

    # Not a coroutine of its own once started: the application's is awaited directly, so that this layer is no frame
    # of the many resumptions of every request. Marked as one for the servers that look (an ASGI 3 application).
    @inspect.markcoroutinefunction
    def __call__(self, scope, receive, send):
        if scope["type"] == "lifespan":
            return self.lifespan(receive, send)
        if not self.started:
            return self._started_then(scope, receive, send)
        return self.app(scope, receive, send)

    async def _started_then(self, scope, receive, send):
        await self.startup()
        await self.app(scope, receive, send)

    async def startup(self) -> None:
        self._starting = self._starting or asyncio.Lock()
        async with self._starting:
            if self.started:
                return
            for step in self.startup_steps:
                result = step()
                if result is not None:
                    await result
            self.started = True

    async def shutdown(self) -> None:
        for step in self.shutdown_steps:
            try:
                result = step()
                if result is not None:
                    await result
            except Exception:  # every other step must still run
                logger.exception("a shutdown step failed")

    async def lifespan(self, receive, send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                try:
                    await self.startup()
                except Exception as error:
                    logger.exception("the server process could not start")
                    await send({"type": "lifespan.startup.failed", "message": str(error)})
                    return
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await self.shutdown()
                await send({"type": "lifespan.shutdown.complete"})
                return
