"""A client of the draughts room server, as a student's would be: a TLS socket, lines out, lines in."""

import contextlib
import socket
import ssl

TIMEOUT = 30


def tls_context() -> ssl.SSLContext:
    # The server's certificate is self-signed: clients may skip its verification.
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    return context


class Client:
    def __init__(self, port: int, host: str = "127.0.0.1"):
        raw = socket.create_connection((host, port), timeout=TIMEOUT)
        self.sock = tls_context().wrap_socket(raw, server_hostname="localhost")
        self.buffer = b""

    def send(self, data: bytes | str) -> None:
        self.sock.sendall(data.encode() if isinstance(data, str) else data)

    def line(self) -> str:
        """Return the next line the server sent, without its ending ("" if the connection closed first)."""
        while b"\n" not in self.buffer:
            chunk = self.sock.recv(65536)
            if not chunk:
                rest, self.buffer = self.buffer, b""
                assert not rest, f"a line without its ending: {rest!r}"
                return ""
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        assert not line.endswith(b"\r"), "answers end with \\n alone"
        return line.decode()

    def say(self, line: str) -> str:
        self.send(line + "\n")
        return self.line()

    def closed(self) -> bool:
        """Return whether the server has closed the connection (after any lines still to read)."""
        try:
            return self.sock.recv(1) == b""
        except (ConnectionError, ssl.SSLError):
            return True

    def variables(self, line: str) -> dict[str, str]:
        return dict(part.split("=", 1) for part in line.split(" ")[1:])

    def state(self) -> dict[str, str]:
        answer = self.say("GET_STATE")
        assert answer.startswith("STATUS_OK "), answer
        return self.variables(answer)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.close()


def room(port: int) -> tuple[Client, Client, Client, Client, dict[str, str]]:
    """Make a room with two clients; return them as (creator, joiner, white, black) and CREATE's variables."""
    creator, joiner = Client(port), Client(port)
    made = creator.variables(creator.say("CREATE"))
    assert joiner.say(f"JOIN {made['ROOM_ID']} {made['ENEMY_COLOR_ID']}") == "ROOM_JOINED"
    creator_is_white = _white(creator)
    white, black = (creator, joiner) if creator_is_white else (joiner, creator)
    return creator, joiner, white, black, made


def _white(client: Client) -> bool:
    """Return whether the client plays white: white moves first, so only white's first move is not refused for turn."""
    answer = client.say("MOVE a3 a4")  # never legal: refused for the turn (black) or for the move (white)
    assert answer.startswith("MOVE_FAIL"), answer
    return "not your turn" not in answer
