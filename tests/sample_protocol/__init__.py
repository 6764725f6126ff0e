"""A line protocol of the tests' own, to check the line-server machinery (core/lineservers.py) in a real server."""
