"""Faults on demand for end-to-end tests: a TCP proxy whose link can be cut and restored, and direct access to a
live server's database (what survives a crash is what the database holds).

A server pointed at the proxy instead of PostgreSQL or Redis sees a real outage: its open connections are reset and
new ones are refused, while the machine's shared servers keep serving every other test.
"""

import asyncio
import contextlib
import sqlite3
import threading
from urllib.parse import urlsplit, urlunsplit


class TcpProxy:
    """Forward 127.0.0.1:<port> to a target address, in a thread of its own, until `cut()`."""

    def __init__(self, target_host: str, target_port: int):
        self.target = (target_host, target_port)
        self.open = True
        self._writers: set[asyncio.StreamWriter] = set()
        self._loop = asyncio.new_event_loop()
        ready = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(ready,), daemon=True)
        self._thread.start()
        if not ready.wait(10):
            raise RuntimeError("the proxy did not start")

    def _run(self, ready: threading.Event) -> None:
        asyncio.set_event_loop(self._loop)
        self._server = self._loop.run_until_complete(asyncio.start_server(self._accept, "127.0.0.1", 0))
        self.port = self._server.sockets[0].getsockname()[1]
        ready.set()
        self._loop.run_forever()

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if not self.open:
            writer.transport.abort()
            return
        try:
            upstream_reader, upstream_writer = await asyncio.open_connection(*self.target)
        except OSError:
            writer.transport.abort()
            return
        self._writers |= {writer, upstream_writer}
        await asyncio.gather(self._pipe(reader, upstream_writer), self._pipe(upstream_reader, writer))

    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(OSError, asyncio.IncompleteReadError):
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
        writer.transport.abort()
        self._writers.discard(writer)

    def url(self, url: str) -> str:
        """Return `url` (postgresql:// or redis://) pointed at this proxy."""
        parts = urlsplit(url)
        auth = parts.netloc.rpartition("@")[0]
        return urlunsplit(parts._replace(netloc=f"{auth + '@' if auth else ''}127.0.0.1:{self.port}"))

    def cut(self) -> None:
        """Reset every connection, and refuse new ones, as a server that went down."""

        def cut_now() -> None:
            self.open = False
            for writer in list(self._writers):
                writer.transport.abort()
            self._writers.clear()

        self._call(cut_now)

    def restore(self) -> None:
        self._call(lambda: setattr(self, "open", True))

    def _call(self, function) -> None:
        done = threading.Event()

        def run() -> None:
            try:
                function()
            finally:
                done.set()

        self._loop.call_soon_threadsafe(run)
        done.wait(10)

    def close(self) -> None:
        self.cut()

        async def shut() -> None:
            self._server.close()
            tasks = asyncio.all_tasks() - {asyncio.current_task()}
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            self._loop.stop()

        self._loop.call_soon_threadsafe(lambda: self._loop.create_task(shut()))
        self._thread.join(10)
        self._loop.close()


def query(database_url: str, sql: str, params: tuple = ()) -> list[tuple]:
    """Run one statement on a live server's database (SQLite or PostgreSQL, `%s` placeholders); return its rows."""
    if database_url.startswith("sqlite:"):
        with contextlib.closing(sqlite3.connect(database_url.split(":///", 1)[1])) as connection, connection:
            cursor = connection.execute(sql.replace("%s", "?"), params)
            return cursor.fetchall()
    import psycopg

    with psycopg.connect(database_url, autocommit=True) as connection:
        cursor = connection.execute(sql, params)
        return cursor.fetchall() if cursor.description else []
