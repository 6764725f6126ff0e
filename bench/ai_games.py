#!/usr/bin/env python3
"""`make bench-ai`, second part: the server's computer player (games/bots) in every game the platform hosts, each
level against each other level, with 95 % confidence intervals, and the CPU time per move.

    python bench/ai_games.py [--games N] [--positions P] [--kinds tab,draughts,…] [--pairings 3-2,3-1]

Every pairing plays N games for two (the stronger level in each seat half of the time). The search is limited in
positions looked at (P, default 2,000), not in time, so that the results do not depend on the machine; the server
gives it COMPUTER_THINK_MS of clock as well, which on a fast machine lets it look at more. Time per move is measured
all the same. A game without a winner (a draw, a game cut at MAX_ACTIONS) counts as half a win for each side.
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from games import bots  # noqa: E402  (the rules and the player are pure Python: no Django setup needed)
from games.rules import ENGINES, find_engine  # noqa: E402

# A game that long is no longer about skill.
MAX_ACTIONS = 5_000
Z = 1.96


def wilson(wins: float, games: int) -> tuple[float, float]:
    """The 95 % Wilson interval of a win rate."""
    if games == 0:
        return 0.0, 1.0
    rate = wins / games
    centre = (rate + Z * Z / (2 * games)) / (1 + Z * Z / games)
    half = Z * math.sqrt(rate * (1 - rate) / games + Z * Z / (4 * games * games)) / (1 + Z * Z / games)
    return centre - half, centre + half


def play(kind: str, levels: tuple[int, int], seed: int, positions: int, times: dict[int, list[float]]) -> float | None:
    """Play one game between two levels (seat 0's first); return seat 0's score (1, 0 or ½), None if cut."""
    engine = find_engine(kind)
    rng = random.Random(seed)
    state = engine.new(2, engine.options({}), rng)
    for _ in range(MAX_ACTIONS):
        seat = engine.to_act(state)
        if seat is None:
            break
        # The process's CPU time: another program running beside it, or a pause, does not count.
        started = time.process_time()
        budget = bots.Budget(seconds=math.inf, positions=positions)
        action = bots.choose(engine, state, seat, levels[seat], rng, budget)
        times[levels[seat]].append(time.process_time() - started)
        engine.apply(state, seat, action, rng)
    outcome = engine.outcome(state)
    if outcome is None:
        return None
    first, second = outcome.ranks[0], outcome.ranks[1]
    return 1.0 if first < second else 0.0 if first > second else 0.5


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=100, help="games per pairing (default 100)")
    parser.add_argument("--positions", type=int, default=2_000, help="positions a search looks at per move")
    parser.add_argument("--kinds", default=",".join(sorted(ENGINES)), help="games to measure, by kind")
    parser.add_argument("--pairings", help="only these pairings, stronger-weaker: 3-2,3-1 (default: all)")
    args = parser.parse_args()
    levels = sorted(bots.LEVELS)
    pairings = [(weaker, stronger) for stronger in levels for weaker in levels if weaker < stronger]
    if args.pairings:
        chosen = {tuple(int(level) for level in pair.split("-")) for pair in args.pairings.split(",")}
        pairings = [(weaker, stronger) for weaker, stronger in pairings if (stronger, weaker) in chosen]
    print(f"The server's computer player, {args.games} games per pairing, searches of {args.positions:,} positions")
    for kind in args.kinds.split(","):
        started = time.monotonic()
        print(f"\n{find_engine(kind).title} ({kind})")
        print("pairing   games  stronger scores  95% CI          cut")
        times: dict[int, list[float]] = {level: [] for level in levels}
        offered = bots.levels_of(kind)
        for weaker, stronger in pairings:
            if stronger not in offered:
                continue
            score, played, cut = 0.0, 0, 0
            for game in range(args.games):
                seats = (stronger, weaker) if game % 2 == 0 else (weaker, stronger)
                seed = game * 7919 + stronger * 31 + weaker
                result = play(kind, seats, seed=seed, positions=args.positions, times=times)
                if result is None:
                    cut += 1
                    result = 0.5
                score += result if game % 2 == 0 else 1 - result
                played += 1
                print(f"  {kind} L{stronger} vs L{weaker}: {score:g} of {played}", file=sys.stderr, flush=True)
            low, high = wilson(score, played)
            name = f"L{stronger} vs L{weaker}"
            print(f"{name:9} {played:<6} {score / played:>14.1%}  {low:.1%} – {high:.1%}  {cut}")
        per_level = "; ".join(
            f"L{level} {1000 * sum(spent) / len(spent):.2f} ms avg, {1000 * max(spent):.0f} ms max"
            for level, spent in times.items()
            if spent
        )
        print(f"CPU time per move: {per_level} ({time.monotonic() - started:.0f} s)")


if __name__ == "__main__":
    main()
