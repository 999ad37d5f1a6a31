"""Risk builtins: quantile, historical and Gaussian VaR, expected shortfall, square-root impact."""

import pytest

from soma_kernel.core.diagnostics import SomaError
from helpers import call, kind_of

GAINS = [float(i) for i in range(1, 101)]
SYMMETRIC = [i * 0.01 for i in range(-50, 51)]


def message_of(name, *args):
    """The message a builtin call raises."""
    with pytest.raises(SomaError) as err:
        call(name, *args)
    return err.value.detail


def test_quantile_interpolates_between_neighbours():
    assert call("quantile", [float(i) for i in range(1, 11)], 0.5) == pytest.approx(5.5)
    assert call("quantile", [3, 1, 2], 0) == 1.0
    assert call("quantile", [3, 1, 2], 1) == 3.0
    assert call("quantile", [3, 1, 2], 7) == 3.0          # q is clamped to [0, 1]
    assert message_of("quantile", [], 0.5) == "quantile: empty input"
    assert kind_of("quantile", ["a"], 0.5) == "type"


def test_historical_var_is_minus_the_left_tail_quantile():
    # q = 0.05 on 1..100: position 4.95, between 5 and 6
    assert call("var_historical", GAINS, {"alpha": 0.95}) == pytest.approx(-5.95)
    assert call("var_historical", SYMMETRIC) == pytest.approx(0.45)


def test_expected_shortfall_is_at_least_the_var():
    var = call("var_historical", SYMMETRIC, {})
    shortfall = call("expected_shortfall_historical", SYMMETRIC, {})
    assert shortfall == pytest.approx(0.475)
    assert shortfall >= var


def test_gaussian_var_from_the_sample_or_given_moments():
    assert call("var_gaussian", SYMMETRIC) == pytest.approx(0.4795531, abs=1e-6)
    assert call("var_gaussian", [0.0, 1.0], {"mu": 0.0, "sigma": 1.0, "alpha": 0.975}) == pytest.approx(1.959964, abs=1e-6)


def test_square_root_impact():
    impact = call("impact_sqrt", 10000, 1000000, 0.02, {"Y": 1.0})
    assert impact["impact"] == pytest.approx(0.002)
    assert impact["bps"] == pytest.approx(20.0)
    assert (impact["Y"], impact["q_over_v"]) == (1.0, pytest.approx(0.01))
    assert call("impact_sqrt", -400, 100, 0.1)["impact"] == pytest.approx(0.2)   # the side does not matter


def test_declared_bounds_are_held():
    assert (message_of("var_historical", GAINS, {"alpha": 1.5})
            == "var_historical: alpha 1.5 is not a confidence level in (0, 1) — e.g. 0.95")
    assert kind_of("var_historical", GAINS, {"alpha": 1.5}) == "range"
    assert (message_of("expected_shortfall_historical", GAINS, {"max_obs": 50})
            == "expected_shortfall_historical: 100 observations past max_obs 50")
    assert message_of("var_gaussian", [], {}) == "var_gaussian: empty input"
    assert kind_of("var_historical", GAINS, "0.95") == "type"
