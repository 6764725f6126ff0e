"""A client of the Fish server, as a student's would be: a TCP socket, one JSON object a line each way."""

import json
import socket

TIMEOUT = 30


class Client:
    def __init__(self, port: int, host: str = "127.0.0.1"):
        self.sock = socket.create_connection((host, port), timeout=TIMEOUT)
        self.buffer = b""

    def send(self, data: bytes | str) -> None:
        self.sock.sendall(data.encode() if isinstance(data, str) else data)

    def line(self) -> bytes:
        """Return the next line the server sent, without its "\\n" (b"" if the connection closed first)."""
        while b"\n" not in self.buffer:
            chunk = self.sock.recv(65536)
            if not chunk:
                rest, self.buffer = self.buffer, b""
                assert not rest, f"a line without its ending: {rest!r}"
                return b""
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return line

    def answer(self) -> dict:
        line = self.line()
        assert line, "the server closed the connection"
        return json.loads(line)

    def ask(self, action: str, **fields) -> dict:
        self.send(json.dumps({"action": action, **fields}) + "\n")
        return self.answer()

    def closed(self) -> bool:
        """Return whether the server closed the connection (after what it sent is read)."""
        return self.line() == b""

    def close(self) -> None:
        self.sock.close()


class Player:
    """A player of a tournament: its token and colour, and a connection to ask with."""

    def __init__(self, client: Client, tournament, players: int | None = None, **extra):
        fields = {"tournament_id": tournament, **extra}
        if players is not None:
            fields["players"] = players
        joined = client.ask("join_tournament", **fields)
        assert set(joined) == {"user_token", "color"}, joined
        self.client, self.token, self.color = client, joined["user_token"], joined["color"]

    def ask(self, action: str, **fields) -> dict:
        return self.client.ask(action, user_token=self.token, **fields)

    def place(self, row: int, col: int) -> dict:
        return self.ask("place_penguin", row=row, col=col)

    def move(self, start: tuple[int, int], end: tuple[int, int]) -> dict:
        return self.ask("move_penguin", start_row=start[0], start_col=start[1], end_row=end[0], end_col=end[1])

    def state(self) -> dict:
        return self.ask("get_state")["current_state"]

    def turn(self) -> str | None:
        return self.ask("check_turn")["color"]
