"""The Glicko-2 rating system, in pure Python (no Django).

After Mark E. Glickman, "Example of the Glicko-2 system" (2013): each player has a rating r, a rating deviation
RD (how uncertain r is) and a volatility σ (how erratic the player's results are). `rate` applies one rating
period; the server makes every finished game a period of its own for both players, as online servers do.
"""

import math
from dataclasses import dataclass

# The ratio between the Glicko and Glicko-2 scales, and the rating of a new player.
SCALE = 173.7178
DEFAULT_RATING = 1500.0
DEFAULT_DEVIATION = 350.0
DEFAULT_VOLATILITY = 0.06
# τ constrains how fast the volatility changes; Glickman advises 0.3 to 1.2, and his example uses 0.5.
TAU = 0.5
CONVERGENCE = 0.000001


@dataclass(frozen=True)
class Glicko:
    """A player's rating, rating deviation and volatility."""

    rating: float = DEFAULT_RATING
    deviation: float = DEFAULT_DEVIATION
    volatility: float = DEFAULT_VOLATILITY


def _g(phi: float) -> float:
    return 1 / math.sqrt(1 + 3 * phi * phi / (math.pi * math.pi))


def _expected(mu: float, mu_j: float, phi_j: float) -> float:
    return 1 / (1 + math.exp(-_g(phi_j) * (mu - mu_j)))


def _volatility(phi: float, sigma: float, delta: float, v: float, tau: float) -> float:
    """Return the new volatility: the root of Glickman's f by the Illinois algorithm (step 5)."""
    a = math.log(sigma * sigma)

    def f(x: float) -> float:
        ex = math.exp(x)
        return ex * (delta * delta - phi * phi - v - ex) / (2 * (phi * phi + v + ex) ** 2) - (x - a) / (tau * tau)

    big_a = a
    if delta * delta > phi * phi + v:
        big_b = math.log(delta * delta - phi * phi - v)
    else:
        k = 1
        while f(a - k * tau) < 0:
            k += 1
        big_b = a - k * tau
    f_a, f_b = f(big_a), f(big_b)
    while abs(big_b - big_a) > CONVERGENCE:
        big_c = big_a + (big_a - big_b) * f_a / (f_b - f_a)
        f_c = f(big_c)
        if f_c * f_b <= 0:
            big_a, f_a = big_b, f_b
        else:
            f_a /= 2
        big_b, f_b = big_c, f_c
    return math.exp(big_a / 2)


def rate(player: Glicko, results: list[tuple[Glicko, float]], *, tau: float = TAU) -> Glicko:
    """Return `player`'s rating after one period of games: (opponent before the period, score 1, ½ or 0)."""
    phi = player.deviation / SCALE
    if not results:
        # A period without games only makes the rating less certain.
        return Glicko(
            player.rating, min(DEFAULT_DEVIATION, SCALE * math.hypot(phi, player.volatility)), player.volatility
        )
    mu = (player.rating - DEFAULT_RATING) / SCALE
    opponents = [((o.rating - DEFAULT_RATING) / SCALE, o.deviation / SCALE, score) for o, score in results]
    v_inverse = 0.0
    improvement = 0.0
    for mu_j, phi_j, score in opponents:
        expected = _expected(mu, mu_j, phi_j)
        g = _g(phi_j)
        v_inverse += g * g * expected * (1 - expected)
        improvement += g * (score - expected)
    v = 1 / v_inverse
    sigma = _volatility(phi, player.volatility, v * improvement, v, tau)
    phi_star = math.hypot(phi, sigma)
    new_phi = 1 / math.sqrt(1 / (phi_star * phi_star) + 1 / v)
    new_mu = mu + new_phi * new_phi * improvement
    return Glicko(SCALE * new_mu + DEFAULT_RATING, min(DEFAULT_DEVIATION, SCALE * new_phi), sigma)


def rate_game(first: Glicko, second: Glicko, first_score: float) -> tuple[Glicko, Glicko]:
    """Return both players' ratings after one game between them (`first_score`: 1 won, 0 lost, ½ drawn)."""
    return rate(first, [(second, first_score)]), rate(second, [(first, 1 - first_score)])
