"""Type/conversion, JSON, date, io and crypto builtins."""

import pytest

from soma_kernel.core.diagnostics import SomaError
from soma_kernel.runtime.builtins import call_builtin
from soma_kernel.runtime.values import Variant


def call(name, *args):
    """Call a builtin through the registry."""
    return call_builtin(name, list(args))


def raised(name, *args):
    """The SomaError a call raises."""
    with pytest.raises(SomaError) as err:
        call(name, *args)
    return err.value


def test_len_and_to_string():
    assert call("len", "héllo") == 5 and call("len", [1, 2]) == 2 and call("len", {"a": 1}) == 1
    assert call("to_string", 1.0) == "1.0"
    assert call("to_string", [1, "a"]) == '[1, "a"]'
    assert call("to_string", None) == "()"


def test_lenient_and_strict_conversions():
    assert call("to_int", "12") == 12 and call("to_int", "1.9") == 1 and call("to_int", -2.7) == -2
    assert call("to_int", "12abc") is None and call("to_int", None) is None
    assert call("to_int", str(10 ** 30)) == 10 ** 30
    assert call("to_float", "2.5") == 2.5 and call("to_float", 3) == 3.0 and call("to_float", "x") is None
    assert call("parse_int", "-12") == -12
    for text in ("1.5", "12abc", "", " 1"):
        assert call("parse_int", text) is None
    assert call("parse_float", "1e3") == 1000.0
    for text in ("nan", "inf", "1.5x", ""):
        assert call("parse_float", text) is None


def test_type_of_and_is_type():
    assert [call("type_of", v) for v in (1, 1.0, "", True, [], {}, None)] == \
        ["Int", "Float", "String", "Bool", "List", "Map", "Unit"]
    assert call("type_of", lambda x: x) == "Function"
    assert call("is_type", {"_type": "User"}, "User") and call("is_a", {"_type": "User"}, "User")
    assert call("is_a", Variant("Decision", "Deny", {"reason": "x"}), "Decision")
    assert not call("is_a", {"name": "x"}, "User")


def test_fail_raises_kind_and_detail():
    err = raised("fail", "not_found", "no order o9")
    assert (err.kind, err.detail, str(err)) == ("not_found", "no order o9", "not_found: no order o9")
    assert str(raised("fail", "oops")) == "oops"


def test_fail_reraises_try_result_unchanged():
    caught = {"value": None, "error": "invalid_transition: done → urgent", "kind": "invalid_transition",
              "detail": "done → urgent"}
    err = raised("fail", caught)
    assert (err.kind, err.detail, str(err)) == ("invalid_transition", "done → urgent",
                                                 "invalid_transition: done → urgent")


def test_json_round_trip():
    assert call("to_json", {"a": [1, 2.5, None]}) == '{"a":[1,2.5,null]}'
    assert call("from_json", '{"a": [1, 2.5, null]}') == {"a": [1, 2.5, None]}
    assert call("from_json", {"a": 1}) == {"a": 1}
    assert raised("from_json", "{bad").kind == "json"


def test_parse_date_parts():
    assert call("parse_date", "2026-01-05") == {"year": 2026, "month": 1, "day": 5, "weekday": 1,
                                                "epoch_day": 20458}
    assert call("parse_date", "1970-01-01")["epoch_day"] == 0
    for bad in ("2026-02-30", "2026-1-5", "yesterday", 20260105):
        assert raised("parse_date", bad).kind == "date"


def test_a_well_formed_date_the_calendar_lacks_says_it_does_not_exist():
    impossible = {
        "2026-02-29": "February 2026 has 28 days",
        "2100-02-29": "February 2100 has 28 days",
        "2026-04-31": "April 2026 has 30 days",
        "2026-12-32": "December 2026 has 31 days",
        "2026-13-01": "there is no month 13 (months 01 to 12)",
        "2026-00-10": "there is no month 0 (months 01 to 12)",
        "2026-01-00": "there is no day 0",
        "0000-06-01": "there is no year 0 (years 1 to 9999)",
    }
    for builtin, extra in (("parse_date", ()), ("add_days", (1,)), ("add_months", (1,))):
        for text, why in impossible.items():
            err = raised(builtin, text, *extra)
            assert (err.kind, err.detail) == ("date", f'the date "{text}" does not exist: {why}')
    assert raised("days_between", "2026-01-01", "2026-02-30").detail == \
        'the date "2026-02-30" does not exist: February 2026 has 28 days'
    assert call("parse_date", "2024-02-29")["day"] == 29
    for wrong_format in ("2026-2-28", "26-02-28", "2026/02/28", "28.02.2026", "", 20260228):
        assert raised("parse_date", wrong_format).detail == f'invalid date "{wrong_format}" (expected YYYY-MM-DD)'


def test_date_arithmetic():
    assert call("add_days", "2026-12-31", 1) == "2027-01-01"
    assert call("add_days", "2024-03-01", -1) == "2024-02-29"
    assert call("add_months", "2026-01-31", 1) == "2026-02-28"
    assert call("add_months", "2026-03-15", -3) == "2025-12-15"
    assert call("days_between", "2026-01-01", "2026-02-01") == 31
    assert call("days_between", "2026-02-01", "2026-01-01") == -31
    assert call("months_between", "2026-01-15", "2026-04-14") == 2
    assert call("months_between", "2026-01-15", "2026-04-20") == 3
    assert call("months_between", "2026-04-14", "2026-01-15") == -2
    assert call("days_in_month", 2024, 2) == 29 and call("days_in_month", 2023, 2) == 28
    assert raised("days_in_month", 2024, 13).kind == "date"
    assert call("format_date", 0) == "1970-01-01"
    assert call("format_date", 1700000000) == "2023-11-14"


def test_print_writes_to_current_stdout(capsys):
    assert call("print", "a", 1, [1, "b"], None) is None
    call("print")
    assert capsys.readouterr().out == 'a 1 [1, "b"] ()\n\n'
    assert call("write_str", "é") == 2
    assert capsys.readouterr().out == "é"


def test_files(tmp_path):
    target = tmp_path / "out.txt"
    assert call("write_file", str(target), [1, 2]) is True
    assert call("read_file", str(target)) == "[1, 2]"
    missing = call("read_file", str(tmp_path / "missing.txt"))
    assert "error" in missing


def test_hashes():
    assert call("sha256", "") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    assert call("hmac_sha256", "key", "The quick brown fox jumps over the lazy dog") == \
        "f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8"
    assert call("secure_eq", "a", "a") and not call("secure_eq", "a", "b")
    assert len(call("random_token", 16)) == 32
