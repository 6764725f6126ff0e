"""The one error of the platform's refusals: every service raises it (or a subclass), every transport maps it.

A refusal is an answer, not a fault: the request was understood and declined, nothing changed, and the client is told
why in the words of `str(error)`. `status` is the HTTP status the web transports answer with; a line protocol maps the
refusal to its own failure code. `retry_after` (seconds), when set, tells the client when it may try again.
"""


class Refusal(Exception):
    status = 400

    def __init__(self, message: str, status: int | None = None, retry_after: int | None = None):
        super().__init__(message)
        if status is not None:
            self.status = status
        self.retry_after = retry_after
