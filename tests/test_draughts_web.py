"""The draughts rooms' web transport against a real server: the room's stream follows every change as it is made."""

import json
import queue
import threading

import httpx
import pytest

pytestmark = pytest.mark.server


class Events:
    """A Server-Sent Events stream read in a thread: each message's data, and each comment, in the order they came."""

    def __init__(self, url: str):
        self.items: queue.Queue = queue.Queue()
        self.client = httpx.Client(timeout=httpx.Timeout(10, read=None))
        threading.Thread(target=self._read, args=(url,), daemon=True).start()

    def _read(self, url: str) -> None:
        try:
            with self.client.stream("GET", url) as response:
                for line in response.iter_lines():
                    if line.startswith(":"):
                        self.items.put(("comment", line))
                    elif line.startswith("data:"):
                        self.items.put(("data", json.loads(line[5:])))
        except httpx.HTTPError:
            pass
        finally:
            self.items.put(("end", None))

    def next(self, timeout: float = 60) -> tuple[str, object]:
        return self.items.get(timeout=timeout)

    def close(self) -> None:
        self.client.close()


def test_the_room_stream_follows_every_change_as_it_is_made(start_server):
    server = start_server()
    made = server.http.post("/draughts/rooms/", json={"colour": "w"}).json()
    room = made["room"]
    stream = Events(f"{server.url}/draughts/rooms/{room}/stream")
    kind, view = stream.next()
    assert kind == "data" and view["state"] == "WAITING"
    joined = server.http.post(f"/draughts/rooms/{room}/join", json={"key": made["enemy_key"]}).json()
    assert joined["state"] == "PLAYING"
    # The next item is the change itself: a stream that only re-read the room on its keep-alive would send a
    # ": ping" comment first (20 s later).
    kind, view = stream.next()
    assert (kind, view["state"], view["version"]) == ("data", "PLAYING", joined["version"])
    white = {"key": made["key"], "holder": made["holder"]}
    moved = server.http.post(f"/draughts/rooms/{room}/move", json={**white, "path": ["c3", "d4"]}).json()
    kind, view = stream.next()
    assert kind == "data" and view["version"] == moved["version"] and view["board"] == moved["board"]
    assert view["turn"] == "b"
    stream.close()
