# The front door: `make run` serves on http://127.0.0.1:8008 (PORT to change), `make test` runs every test.
# Each target sets up what it needs first: the virtual environment, the dependencies, the database.

SHELL := /bin/bash
VENV := .venv
BIN := $(VENV)/bin
PORT ?= 8008
export PORT

# Django 6 needs Python 3.12 or newer: take the first interpreter on this machine that is recent enough.
PYTHON ?= $(shell for p in python3.14 python3.13 python3.12 python3 $$(ls -d $$HOME/.pyenv/versions/3.1[2-9]*/bin/python3 2>/dev/null); do \
	$$p -c 'import sys; sys.exit(sys.version_info < (3, 12))' >/dev/null 2>&1 && { echo $$p; break; }; done)

.PHONY: run test lint migrate superuser clean browser bench bench-ai bench-analysis

CHROMIUM := /usr/bin/chromium

# What serving needs, and no more: the tests' and benchmarks' tools come with the targets that use them.
$(BIN)/.serving: pyproject.toml
	@test -n "$(PYTHON)" || { echo "Python 3.12 or newer is needed (Django 6)."; exit 1; }
	@echo "Setting up: a virtual environment in $(VENV) with the server's dependencies (a minute or two the first time)."
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@$(BIN)/python -m pip install --quiet --upgrade pip
	@$(BIN)/python -m pip install --quiet -e .
	@touch $@

$(BIN)/.installed: $(BIN)/.serving
	@echo "Setting up the tools of the tests and benchmarks (pytest, Playwright, ruff, mypy, aiohttp, py-spy)."
	@$(BIN)/python -m pip install --quiet -e '.[test,bench]'
	@touch $@

migrate: $(BIN)/.serving
	@echo "Bringing the database up to date."
	@$(BIN)/python manage.py migrate --noinput

run: migrate
	@$(BIN)/python manage.py collectstatic --noinput --verbosity 0
	@echo "Serving on http://$${HOST:-127.0.0.1}:$(PORT)/ (Ctrl+C stops it)."
	$(BIN)/gunicorn -c tabsite/gunicorn.conf.py tabsite.asgi:application

lint: $(BIN)/.installed
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

# The browser tests drive Debian's Chromium (Playwright cannot download browsers here).
browser:
	@if [ ! -x $(CHROMIUM) ]; then \
		if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
		else echo "Install Debian's chromium (sudo apt-get install chromium) to run the browser tests."; fi; \
	fi

test: lint browser
	$(BIN)/python -m pytest $(PYTEST_ARGS)

# Load on our own server (bench/run.py starts it): games, streams, latency, memory, registrations.
bench: $(BIN)/.installed
	$(BIN)/python bench/run.py $(BENCH_ARGS)

# The computer players' strength: the Tâb page's levels (bench/ai.mjs) and the server's in every game
# (bench/ai_games.py); every pair of levels, win rates with confidence intervals, time per move.
bench-ai: $(BIN)/.installed
	node bench/ai.mjs $(BENCH_AI_ARGS)
	$(BIN)/python bench/ai_games.py $(BENCH_AI_GAMES_ARGS)

# The analysis of finished games: its cost per game in every game, and the share of the CPU players keep beside it.
bench-analysis: $(BIN)/.installed
	$(BIN)/python bench/analysis.py $(BENCH_ANALYSIS_ARGS)

superuser: migrate
	$(BIN)/python manage.py createsuperuser

clean:
	rm -rf $(VENV) var *.egg-info
