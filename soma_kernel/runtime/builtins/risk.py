"""Risk builtins (spec: the reference's "Linear algebra & risk" group):
empirical quantiles, historical and Gaussian value-at-risk, expected shortfall,
and the square-root market-impact law.

Returns are a List of numbers, positive for gains; every result is a Float.
The options Map is the reference's: `alpha` (a confidence level in (0, 1),
0.95 by default), `max_obs` (a bound on the observations, which the data must
respect), `mu` / `sigma` for var_gaussian, `Y` for impact_sqrt; other keys are
ignored, as there. The reference's sampling and covariance-cleaning builtins
(to_sampled, svd_lowrank, regress_sgd, clean_covariance…) are not here.
"""

from __future__ import annotations

import math
from typing import Any

from ...core.diagnostics import SomaError
from ..matrices import as_float
from ..values import type_of
from .registry import builtin

GROUP = "risk"

DEFAULT_ALPHA = 0.95
# the reference clamps the normal quantile's probability away from 0 and 1
PROBABILITY_CLAMP = 1e-15


def _numbers(fn_name: str, values: Any) -> list[float]:
    """`values` as a list of Floats, or the type error naming `fn_name`."""
    if type(values) is not list:
        raise SomaError("type", f"{fn_name}: expected a List of numbers, got {type_of(values)}")
    return [as_float(fn_name, x) for x in values]


def _options(fn_name: str, opts: Any) -> dict:
    """The options Map (an absent one is empty)."""
    if opts is None:
        return {}
    if not isinstance(opts, dict):
        raise SomaError("type", f"{fn_name}: options must be a Map, got {type_of(opts)}")
    return opts


def _range_error(fn_name: str, message: str) -> SomaError:
    """A declared bound the call does not respect (kind `range`)."""
    return SomaError("range", f"{fn_name}: {message}")


def _alpha(fn_name: str, opts: dict) -> float:
    """The confidence level `alpha` in (0, 1)."""
    alpha = as_float(fn_name, opts.get("alpha", DEFAULT_ALPHA))
    if not 0.0 < alpha < 1.0:
        raise _range_error(fn_name, f"alpha {alpha} is not a confidence level in (0, 1) — e.g. 0.95")
    return alpha


def _nonempty_numbers(fn_name: str, values: Any) -> list[float]:
    """`values` as a non-empty list of Floats."""
    numbers = _numbers(fn_name, values)
    if not numbers:
        raise SomaError("type", f"{fn_name}: empty input")
    return numbers


def _returns(fn_name: str, values: Any, opts: dict) -> list[float]:
    """The returns, non-empty and within `max_obs` when it is given."""
    returns = _nonempty_numbers(fn_name, values)
    if "max_obs" in opts:
        bound = opts["max_obs"]
        if type(bound) is not int or bound < 0:
            raise SomaError("type", f"{fn_name}: max_obs must be a non-negative Int, got {type_of(bound)}")
        if len(returns) > bound:
            raise _range_error(fn_name, f"{len(returns)} observations past max_obs {bound}")
    return returns


def _risk_inputs(fn_name: str, returns: Any, opts: Any) -> tuple[dict, float, list[float]]:
    """The options Map, its confidence level `alpha` and the checked returns of a risk measure."""
    options = _options(fn_name, opts)
    alpha = _alpha(fn_name, options)
    return options, alpha, _returns(fn_name, returns, options)


def _quantile(sorted_values: list[float], q: float) -> float:
    """The q-quantile of sorted values, interpolated linearly between neighbours."""
    position = q * (len(sorted_values) - 1)
    low, high = math.floor(position), math.ceil(position)
    fraction = position - low
    return sorted_values[low] * (1.0 - fraction) + sorted_values[high] * fraction


@builtin(GROUP, "quantile(values: List, q: Float) -> Float",
         "The empirical q-quantile (0 ≤ q ≤ 1, clamped) of `values`, interpolated linearly.")
def quantile(values, q):
    numbers = _nonempty_numbers("quantile", values)
    return _quantile(sorted(numbers), min(max(as_float("quantile", q), 0.0), 1.0))


@builtin(GROUP, "var_historical(returns: List, opts?: Map) -> Float",
         "Historical value-at-risk at confidence `alpha` (0.95): minus the (1 - alpha) quantile of the returns.")
def var_historical(returns, opts=None):
    _, alpha, values = _risk_inputs("var_historical", returns, opts)
    values.sort()
    return -_quantile(values, 1.0 - alpha)


@builtin(GROUP, "expected_shortfall_historical(returns: List, opts?: Map) -> Float",
         "Historical expected shortfall (CVaR): minus the mean of the returns at or below the "
         "(1 - alpha) quantile.")
def expected_shortfall_historical(returns, opts=None):
    _, alpha, values = _risk_inputs("expected_shortfall_historical", returns, opts)
    cutoff = _quantile(sorted(values), 1.0 - alpha)
    tail = [x for x in values if x <= cutoff]
    return -(sum(tail) / len(tail)) if tail else -cutoff


@builtin(GROUP, "var_gaussian(returns: List, opts?: Map) -> Float",
         "Gaussian value-at-risk: -(mu + sigma · Φ⁻¹(1 - alpha)), mu and sigma (population) from "
         "the returns unless given.")
def var_gaussian(returns, opts=None):
    options, alpha, values = _risk_inputs("var_gaussian", returns, opts)
    mean = sum(values) / len(values)
    mu = as_float("var_gaussian", options.get("mu", mean))
    spread = math.sqrt(sum((x - mean) ** 2 for x in values) / len(values))
    sigma = as_float("var_gaussian", options.get("sigma", spread))
    from statistics import NormalDist  # lazy: statistics pulls in fractions and decimal

    p = min(max(1.0 - alpha, PROBABILITY_CLAMP), 1.0 - PROBABILITY_CLAMP)
    return -(mu + sigma * NormalDist().inv_cdf(p))


@builtin(GROUP, "impact_sqrt(qty: Float, daily_volume: Float, sigma: Float, opts?: Map) -> Map",
         "The square-root market-impact law: impact = Y · sigma · sqrt(qty / daily_volume) as a "
         "fraction of the price, with bps, Y and q_over_v.")
def impact_sqrt(qty, daily_volume, sigma, opts=None):
    options = _options("impact_sqrt", opts)
    q = abs(as_float("impact_sqrt", qty))
    volume = max(as_float("impact_sqrt", daily_volume), 1e-12)
    y = as_float("impact_sqrt", options.get("Y", 1.0))
    impact = y * abs(as_float("impact_sqrt", sigma)) * math.sqrt(q / volume)
    return {"impact": impact, "bps": impact * 10_000.0, "Y": y, "q_over_v": q / volume}
