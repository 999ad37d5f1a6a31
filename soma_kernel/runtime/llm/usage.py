"""Provider usage is data, not trust: what one model exchange is charged.

A provider (or a cassette standing in for one) reports how many tokens an
exchange took. Those figures are read like any foreign data: a figure is
usable when it is a whole number (a JSON integer, not `true`), at least 0 and
at most `USAGE_CEILING`, and the reply's share is not more than the total.
The charge is then:

- usable figures: the reported total, plus what the reply measures beyond
  the reported reply tokens (a provider that under-reports its reply is
  charged what it sent), at least 1;
- no figures at all (many local servers send none): the estimate the mocks
  use, a token per 4 characters of prompt and reply, at least 1;
- a figure that is not usable (negative, fractional, a string, a Bool, an
  impossible size, a reply larger than its total): the request's upper bound
  (`mocks.request_bound`: its bytes + 8 per message + 16 + max_tokens, or the
  estimate when that is larger), with a warning on stderr. A lying figure can
  never lower `tokens_used()` or raise `tokens_remaining()`; it costs the most
  the request could have cost.
"""

from __future__ import annotations

import json
import math
from typing import Optional

USAGE_CEILING = 10 ** 9  # tokens one exchange cannot reach: a larger figure is a lie, not a bill


def usage_figure(value, name: str) -> tuple[Optional[int], Optional[str]]:
    """(the figure, None) when `value` is usable, (None, None) when absent, (None, why) when not usable."""
    if value is None:
        return None, None
    if type(value) is not int:
        return None, f"the provider's usage {name} is {_shown(value)}, not a whole number"
    if value < 0:
        return None, f"the provider's usage {name} is negative ({value})"
    if value > USAGE_CEILING:
        return None, f"the provider's usage {name} is {value}, more than any exchange can take"
    return value, None


def checked_usage(total, output, total_name: str = "total_tokens",
                  output_name: str = "output_tokens") -> tuple[Optional[int], Optional[int], Optional[str]]:
    """(total, output, problem): the usable figures, and why they are not when one is not."""
    total, problem = usage_figure(total, total_name)
    output, output_problem = usage_figure(output, output_name)
    problem = problem or output_problem
    if problem is None and total is not None and output is not None and output > total:
        problem = f"the provider's usage {output_name} ({output}) is more than its {total_name} ({total})"
    return (None, None, problem) if problem else (total, output, None)


def charged_tokens(total: Optional[int], output: Optional[int], problem: Optional[str], prompt_chars: int,
                   reply_chars: int, bound: int) -> int:
    """The tokens one exchange costs, by the rule of the module docstring."""
    estimate = max(math.ceil((prompt_chars + reply_chars) / 4), 1)
    if problem is not None:
        return max(bound, estimate)
    if total is None:
        return estimate
    return max(total + max(math.ceil(reply_chars / 4) - (output or 0), 0), 1)


def _shown(value) -> str:
    """A usage value as JSON, cut short."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 40 else text[:39] + "…"
