"""The Tâb course's API, exactly as the course server spoke it: eight functions over HTTP (POST bodies of JSON, at the
root of the server) and the `update` stream of Server-Sent Events, with the spectators' stream beside it."""
