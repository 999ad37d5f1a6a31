"""Pure date builtins (spec §9 "time", the deterministic part): ISO
"YYYY-MM-DD" dates, parsed strictly; invalid dates raise kind "date".
The clock (now, now_ms, today, sleep) belongs to the interpreter."""

from __future__ import annotations

import calendar
import datetime as _dt
import re

from ...core.diagnostics import SomaError
from ..values import display
from .checks import expect_int
from .registry import builtin

GROUP = "time"

_ISO_DATE = re.compile(r"(\d{4})-(\d{2})-(\d{2})")
_EPOCH = _dt.date(1970, 1, 1)
_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December")  # not calendar.month_name, which follows the locale


def parse_iso(text) -> _dt.date:
    """A strict "YYYY-MM-DD" String as a date; kind "date" otherwise: a wrong format says the format,
    a well-formed day the calendar lacks (`2026-02-29`, `2026-13-01`) says why it does not exist."""
    match = _ISO_DATE.fullmatch(text) if type(text) is str else None
    if match is None:
        raise SomaError("date", f'invalid date "{display(text)}" (expected YYYY-MM-DD)')
    year, month, day = (int(part) for part in match.groups())
    if year < 1:
        raise SomaError("date", f'the date "{text}" does not exist: there is no year 0 (years 1 to 9999)')
    if not 1 <= month <= 12:
        raise SomaError("date", f'the date "{text}" does not exist: there is no month {month} (months 01 to 12)')
    last = calendar.monthrange(year, month)[1]
    if day < 1:
        raise SomaError("date", f'the date "{text}" does not exist: there is no day 0')
    if day > last:
        raise SomaError("date", f'the date "{text}" does not exist: {_MONTHS[month - 1]} {year} has {last} days')
    return _dt.date(year, month, day)


def _shifted(start: _dt.date, days: int) -> _dt.date:
    """`start` moved by `days`, kind "date" outside years 1..9999."""
    try:
        return start + _dt.timedelta(days=days)
    except OverflowError:
        raise SomaError("date", "date out of range (years 1 to 9999)") from None


@builtin(GROUP, 'parse_date(s: "YYYY-MM-DD") -> {year, month, day, weekday, epoch_day}',
         "Strict ISO date to its parts (weekday 1 = Monday).")
def parse_date(text):
    """parse_date("2026-01-05").weekday = 1."""
    day = parse_iso(text)
    return {
        "year": day.year,
        "month": day.month,
        "day": day.day,
        "weekday": day.isoweekday(),
        "epoch_day": (day - _EPOCH).days,
    }


@builtin(GROUP, "add_days(date: String, n: Int) -> String", "The ISO date n days later (negative n goes back).")
def add_days(text, n):
    """add_days("2026-12-31", 1) = "2027-01-01"."""
    return _shifted(parse_iso(text), expect_int("add_days", n)).isoformat()


@builtin(GROUP, "add_months(date: String, n: Int) -> String",
         "Same day n months later, clamped to the month's length.")
def add_months(text, n):
    """add_months("2026-01-31", 1) = "2026-02-28"."""
    day = parse_iso(text)
    months = day.year * 12 + (day.month - 1) + expect_int("add_months", n)
    year, month = divmod(months, 12)
    if not 1 <= year <= 9999:
        raise SomaError("date", "date out of range (years 1 to 9999)")
    last = calendar.monthrange(year, month + 1)[1]
    return _dt.date(year, month + 1, min(day.day, last)).isoformat()


@builtin(GROUP, "days_between(a: String, b: String) -> Int", "Days from a to b (negative when b is earlier).")
def days_between(a, b):
    """days_between("2026-01-01", "2026-02-01") = 31."""
    return (parse_iso(b) - parse_iso(a)).days


@builtin(GROUP, "months_between(a: String, b: String) -> Int",
         "Whole months from a to b, day-of-month aware.")
def months_between(a, b):
    """months_between("2026-01-15", "2026-04-14") = 2."""
    start, end = parse_iso(a), parse_iso(b)
    packed_start = (start.year * 12 + start.month) * 32 + start.day
    packed_end = (end.year * 12 + end.month) * 32 + end.day
    difference = packed_end - packed_start
    whole = abs(difference) // 32
    return whole if difference >= 0 else -whole


@builtin(GROUP, "days_in_month(year: Int, month: Int) -> Int", "28 to 31, leap years included.")
def days_in_month(year, month):
    """days_in_month(2024, 2) = 29."""
    expect_int("days_in_month", year)
    expect_int("days_in_month", month)
    if not 1 <= month <= 12 or not 1 <= year <= 9999:
        raise SomaError("date", f"invalid month {year}-{month}")
    return calendar.monthrange(year, month)[1]


@builtin(GROUP, "format_date(ts: Int) -> String", 'A Unix-seconds timestamp as "YYYY-MM-DD" (UTC).')
def format_date(ts):
    """format_date(0) = "1970-01-01"."""
    seconds = ts if type(ts) is int else int(ts) if type(ts) is float and ts == ts else expect_int("format_date", ts)
    return _shifted(_EPOCH, seconds // 86400).isoformat()
