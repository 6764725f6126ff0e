"""The rules vectors (tests/vectors/tab.json.gz): current with games/rules/tab.py, and passed by the JavaScript twin."""

import gzip
import io
import json
import random
import shutil
import subprocess
from pathlib import Path

import pytest

from games.management.commands.rules_vectors import read_vectors, vectors_path
from games.rules.tab import State, Throw
from games.rules.tab_vectors import decode_state, encode_state, generate, render, summary

from .conftest import require

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def vectors():
    return generate()


def test_the_stored_vectors_are_what_the_rules_give_now(vectors) -> None:
    # Not an `assert ==`: on a difference, pytest would diff megabytes.
    if read_vectors("tab") != render(vectors):
        pytest.fail(
            f"{vectors_path('tab').relative_to(ROOT)} is not what games/rules/tab.py gives now: "
            "run `python manage.py rules_vectors tab` and commit the file with the rules change"
        )


def test_the_vectors_are_varied(vectors) -> None:
    counts = summary(vectors)
    assert len({tuple(code.split(" ")[:2]) for code, _ in vectors["positions"]}) == counts["positions"] >= 10_000
    for kind in ("forks", "must pass", "throw again", "captures", "wins", "reached last row", "row 3 frozen"):
        assert counts[kind] >= 100, kind
    messages = [name for name in counts if name.startswith("refused: ")]
    assert len(messages) == 15 and all(counts[name] >= 10 for name in messages), counts


def test_the_compact_notation_keeps_every_field() -> None:
    state = State.new(7)
    rng = random.Random(7)
    for _ in range(300):
        if state.winner is not None:
            break
        if state.can_throw:
            state.throw(Throw.random(rng))
        elif state.must_pass:
            state.pass_turn()
        elif state.step == "to":
            assert state.selected is not None
            state.select(rng.choice(state.selected))
        else:
            state.select(rng.choice(state.legal_moves()).origin)
        assert decode_state(encode_state(state)) == state
    assert encode_state(State.new(7)) == "bbbbbbb..............rrrrrrr B - - from - -"
    state.dice, state.step, state.cell, state.selected = Throw((True, False, True, True)), "to", 20, [21, 7]
    assert encode_state(state).split(" ")[3:] == ["d", "to", "20", "21,7"]
    assert json.loads(json.dumps(decode_state(encode_state(state)).to_json())) == state.to_json()


def test_the_javascript_engine_passes_the_vectors_and_its_tests() -> None:
    node = shutil.which("node")
    require(node is not None, "node (the JavaScript rules engine and CPU player, tests/js/)")
    result = subprocess.run(
        [node, "--test", "tests/js/"], cwd=ROOT, capture_output=True, text=True, timeout=600, check=False
    )
    assert result.returncode == 0, f"node --test tests/js/ failed:\n{result.stdout[-20_000:]}\n{result.stderr[-5_000:]}"


def test_one_command_writes_and_checks_a_games_vectors(tmp_path, monkeypatch) -> None:
    from django.core.management import CommandError, call_command

    from games.management.commands import rules_vectors

    # Each game's own rules tests check its stored vectors; here, that the command does, with the quickest game's
    # (all four games' together take a minute on a slow machine).
    call_command("rules_vectors", "draughts", "--check", stdout=io.StringIO())
    with pytest.raises(CommandError, match="not a game with rules vectors"):
        call_command("rules_vectors", "chess", stdout=io.StringIO())
    # Written elsewhere, the file has the very text that is checked.
    monkeypatch.setattr(rules_vectors, "VECTORS_DIR", tmp_path)
    with pytest.raises(CommandError, match="is missing"):
        call_command("rules_vectors", "draughts", "--check", stdout=io.StringIO())
    call_command("rules_vectors", "draughts", stdout=io.StringIO())
    assert rules_vectors.read_vectors("draughts") == read_vectors_at(ROOT / "tests" / "vectors" / "draughts.json.gz")


def read_vectors_at(path: Path) -> bytes:
    return gzip.decompress(path.read_bytes())
