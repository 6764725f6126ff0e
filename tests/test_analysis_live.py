"""The analysis as `make run` makes it: a process of its own beside the server, at a lower priority, that analyses
each game once it has finished, and stops with the server."""

import signal
import time
from pathlib import Path

# Long enough for a slow machine to start a process and analyse a game: the test waits for what it looks for, and
# only a failure waits this long.
PATIENCE = 180


def analyser_of(master: int) -> int:
    """Return the process id of the analysing process that the server `master` started."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            command = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        if parent == master and b"analyse" in command and b"--follow" in command:
            return int(entry.name)
    raise AssertionError("no analysing process beside the server")


def niceness(pid: int) -> int:
    return int((Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[16])


def test_the_server_analyses_finished_games_in_a_process_of_lower_priority(gunicorn):
    server = gunicorn(ANALYSIS_POSITIONS="3000")
    analyser = analyser_of(server.process.pid)
    assert niceness(analyser) > niceness(server.process.pid)
    game = server.manage(
        "shell", "-c", "from tests.played import finished_game; print(finished_game('tab', 4).public_id)"
    )
    game = game.split()[-1]
    deadline = time.monotonic() + PATIENCE
    while 'data-state="made"' not in server.http.get(f"/games/{game}/").text:
        assert time.monotonic() < deadline, server.log.read_text()
        time.sleep(0.5)

    server.process.send_signal(signal.SIGTERM)
    assert server.process.wait(30) == 0
    # It went with the server.
    deadline = time.monotonic() + 30
    while alive(analyser):
        assert time.monotonic() < deadline, "the analysing process outlived the server"
        time.sleep(0.1)


def alive(pid: int) -> bool:
    """Return whether a process runs (one that ended and was not waited for yet does not)."""
    try:
        return (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False
