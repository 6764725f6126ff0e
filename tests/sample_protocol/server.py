"""One line a request, one line an answer: ECHO, the serving process's PID, the number of accounts (read in the
process's database thread, as a game's protocol does), QUIT."""

import os

from django.contrib.auth import get_user_model

from core.dbthread import in_database_thread


def accounts() -> int:
    return get_user_model().objects.count()


async def handle(reader, writer) -> None:
    writer.write(b"HELLO\n")
    while line := await reader.readline():
        command = line.decode("utf-8", "replace").strip()
        if command == "QUIT":
            break
        if command == "PID":
            answer = str(os.getpid())
        elif command == "ACCOUNTS":
            answer = str(await in_database_thread(accounts)())
        elif command == "FAIL":
            raise RuntimeError("a handler failed")
        else:
            answer = f"ECHO {command}"
        writer.write(answer.encode() + b"\n")
        await writer.drain()
