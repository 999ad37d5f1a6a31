"""String builtins (spec §9 "string"): splitting, padding, searching,
`format` (a printf subset), regexes, slicing, templates.

Lengths and indexes count characters (code points) except `str_len` and
`str_at`, which count UTF-8 bytes like the reference.
"""

from __future__ import annotations

import re
from typing import Any

from ...core.diagnostics import SomaError
from ..limits import MAX_VALUE_LENGTH, check_length
from ..values import display, equals, map_key, type_of
from .checks import expect_int, expect_list, expect_map, expect_str
from .math import fixed_text
from .pipeline import inner_join
from .registry import builtin

GROUP = "string"



@builtin(GROUP, "concat(a, b) -> String | concat(a: List, b: List) -> List",
         "Concatenate two strings, or join two lists.")
def concat(a, b):
    """concat("a", 1) = "a1"; concat([1], [2]) = [1, 2]."""
    if type(a) is list and type(b) is list:
        check_length("concat", len(a) + len(b), "elements")
        return a + b
    left, right = display(a), display(b)
    check_length("concat", len(left) + len(right))
    return left + right


def _pad(name: str, s: Any, width: Any, fill: Any) -> tuple[str, int, str]:
    """Checked arguments of pad_left / pad_right."""
    text = s if type(s) is str else display(s)
    expect_int(name, width)
    fill = expect_str(name, fill)
    if not fill:
        raise SomaError("type", f"{name}() needs a non-empty fill")
    if width > MAX_VALUE_LENGTH:
        raise SomaError("range", f"{name}(): width {width} is larger than {MAX_VALUE_LENGTH} characters")
    return text, width - len(text), fill


def _fill(fill: str, count: int) -> str:
    """`count` characters of the repeated fill text."""
    return (fill * (count // len(fill) + 1))[:count] if count > 0 else ""


@builtin(GROUP, "pad_left(s, width: Int, fill?: String) -> String", "Left-pad to `width` characters.")
def pad_left(s, width, fill=" "):
    """pad_left("7", 4, "0") = "0007"."""
    text, missing, fill = _pad("pad_left", s, width, fill)
    return _fill(fill, missing) + text


@builtin(GROUP, "pad_right(s, width: Int, fill?: String) -> String", "Right-pad to `width` characters.")
def pad_right(s, width, fill=" "):
    """pad_right("ab", 4) = "ab  "."""
    text, missing, fill = _pad("pad_right", s, width, fill)
    return text + _fill(fill, missing)


@builtin(GROUP, "split(s: String, delim: String) -> List<String>", "Split a string on a delimiter.")
def split(s, delim):
    """split("a,,b", ",") = ["a", "", "b"]; an empty delimiter splits characters."""
    expect_str("split", s)
    expect_str("split", delim)
    if not delim:
        return ["", *s, ""]
    return s.split(delim)


@builtin(GROUP, "replace(s: String, old: String, new: String) -> String", "Replace every occurrence of `old`.")
def replace(s, old, new):
    """replace("aXbX", "X", "-") = "a-b-"."""
    text, old, new = expect_str("replace", s), expect_str("replace", old), display(new)
    count = text.count(old) if old else len(text) + 1
    check_length("replace", len(text) + count * (len(new) - len(old)))
    return text.replace(old, new)


@builtin(GROUP, "contains(haystack, needle) -> Bool",
         "Substring test; list membership (structural); map key membership.")
def contains(haystack, needle):
    """contains("abc", "b"), contains([1, 2], 2), contains(map("k", 1), "k")."""
    t = type(haystack)
    if t is str:
        return display(needle) in haystack
    if t is list:
        if type(needle) is str:
            return needle in haystack
        return any(equals(item, needle) for item in haystack)
    if t is dict:
        return map_key(needle) in haystack
    if haystack is None:
        return False
    raise SomaError("type", f"contains() expects a String, List or Map, got {type_of(haystack)}")


@builtin(GROUP, "starts_with(s: String, prefix: String) -> Bool", "True if `s` begins with `prefix`.")
def starts_with(s, prefix):
    """starts_with("soma", "so")."""
    return expect_str("starts_with", s).startswith(expect_str("starts_with", prefix))


@builtin(GROUP, "ends_with(s: String, suffix: String) -> Bool", "True if `s` ends with `suffix`.")
def ends_with(s, suffix):
    """ends_with("soma", "ma")."""
    return expect_str("ends_with", s).endswith(expect_str("ends_with", suffix))


@builtin(GROUP, "lowercase(s: String) -> String", "Lowercase (non-strings are stringified first).")
def lowercase(s):
    """lowercase("ABC") = "abc"."""
    return (s if type(s) is str else display(s)).lower()


@builtin(GROUP, "uppercase(s: String) -> String", "Uppercase (non-strings are stringified first).")
def uppercase(s):
    """uppercase("abc") = "ABC"."""
    return (s if type(s) is str else display(s)).upper()


@builtin(GROUP, "trim(s: String, chars?: String) -> String",
         "Strip leading and trailing whitespace, or any of the characters in `chars`.")
def trim(s, chars=None):
    """trim("  a ") = "a"; trim("xxaxx", "x") = "a"."""
    text = expect_str("trim", s)
    if chars is None:
        return text.strip()
    return text.strip(expect_str("trim", chars))


@builtin(GROUP, "fields(s: String) -> List<String>", "Split on runs of whitespace, no empty pieces.")
def fields(s):
    """fields(" a  b ") = ["a", "b"]."""
    return expect_str("fields", s).split()


@builtin(GROUP, "index_of(s: String|List, x) -> Int", "Index of the first occurrence, -1 if absent.")
def index_of(haystack, needle):
    """index_of("abc", "c") = 2; index_of([5, 6], 6) = 1."""
    if type(haystack) is str:
        return haystack.find(expect_str("index_of", needle))
    for i, item in enumerate(expect_list("index_of", haystack)):
        if equals(item, needle):
            return i
    return -1


@builtin(GROUP, "substring(s: String, start: Int, end: Int) -> String",
         "Character slice [start, end), clamped.", min_args=2)
def substring(s, start, end=None):
    """substring("hello", 1, 3) = "el"."""
    text = expect_str("substring", s)
    begin = max(expect_int("substring", start), 0)
    stop = len(text) if end is None else max(expect_int("substring", end), 0)
    return text[begin:stop]


_HTML_ESCAPES = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"})


@builtin(GROUP, "escape_html(s: String) -> String", "Escape &, <, >, double and single quotes.")
def escape_html(s):
    """escape_html("<a>") = "&lt;a&gt;"."""
    return (s if type(s) is str else display(s)).translate(_HTML_ESCAPES)


@builtin(GROUP, "str_len(s: String) -> Int", "Byte length (UTF-8) of a string.")
def str_len(s):
    """str_len("é") = 2."""
    return len(expect_str("str_len", s).encode("utf-8"))


@builtin(GROUP, "str_at(s: String, i: Int) -> Int", "Byte value at index i; errors if out of range.")
def str_at(s, i):
    """str_at("A", 0) = 65."""
    data = expect_str("str_at", s).encode("utf-8")
    index = expect_int("str_at", i)
    if not 0 <= index < len(data):
        raise SomaError("index", f"str_at index {index} out of range for length {len(data)}")
    return data[index]


@builtin(GROUP, "str_eq(a: String, b: String) -> Bool", "Exact string equality.")
def str_eq(a, b):
    """str_eq("a", "a")."""
    return expect_str("str_eq", a) == expect_str("str_eq", b)


@builtin(GROUP, "chr(n: Int) -> String", "The character with code point n.")
def chr_(n):
    """chr(65) = "A"."""
    code = expect_int("chr", n)
    if not 0 <= code <= 0x10FFFF or 0xD800 <= code <= 0xDFFF:
        raise SomaError("range", f"chr(): {code} is not a Unicode code point")
    return chr(code)


@builtin(GROUP, "ord(s: String) -> Int", "Code point of the first character.")
def ord_(s):
    """ord("A") = 65."""
    text = expect_str("ord", s)
    if not text:
        raise SomaError("range", "ord() of an empty string")
    return ord(text[0])


# ---------------------------------------------------------------- regexes

_REGEX_CACHE: dict[str, re.Pattern] = {}


def compile_regex(name: str, pattern: Any) -> re.Pattern:
    """A compiled pattern (cached); a bad pattern is kind "type"."""
    compiled = _REGEX_CACHE.get(pattern) if type(pattern) is str else None
    if compiled is None:
        source = expect_str(name, pattern)
        try:
            compiled = re.compile(source)
        except re.error as err:
            raise SomaError("type", f"{name}(): invalid pattern: {err}") from None
        _REGEX_CACHE[source] = compiled
    return compiled


@builtin(GROUP, "regex_count(text: String, pattern: String) -> Int", "Number of non-overlapping matches.")
def regex_count(text, pattern):
    """regex_count("a1b22", "[0-9]+") = 2."""
    return sum(1 for _ in compile_regex("regex_count", pattern).finditer(expect_str("regex_count", text)))


@builtin(GROUP, "regex_match(text: String, pattern: String) -> Int", "1 when the pattern matches anywhere, else 0.")
def regex_match(text, pattern):
    """regex_match("abc", "b") = 1."""
    found = compile_regex("regex_match", pattern).search(expect_str("regex_match", text))
    return 1 if found else 0


_DOLLAR_GROUP = re.compile(r"\$(?:\{(\w+)\}|(\d+))")


def _python_replacement(replacement: str) -> str:
    """Translate `$1` / `${name}` group references to Python's syntax."""
    escaped = replacement.replace("\\", "\\\\")
    return _DOLLAR_GROUP.sub(lambda m: "\\g<" + (m.group(1) or m.group(2)) + ">", escaped)


@builtin(GROUP, "regex_replace(text: String, pattern: String, replacement: String) -> String",
         "Replace every match; $1 refers to the first capture group.")
def regex_replace(text, pattern, replacement):
    """regex_replace("a1", "([a-z])([0-9])", "$2$1") = "1a"."""
    compiled = compile_regex("regex_replace", pattern)
    template = _python_replacement(expect_str("regex_replace", replacement))
    try:
        return compiled.sub(template, expect_str("regex_replace", text))
    except (re.error, IndexError) as err:
        raise SomaError("type", f"regex_replace(): {err}") from None


# ---------------------------------------------------------------- format

_FORMAT_SPEC = re.compile(r"%([-0+ ]*)(\d+)?(?:\.(\d+))?([dsfeEgixX%])")


def _format_exponent(x: float, precision: int, upper: bool) -> str:
    """`%.Ne` in the reference's form: mantissa, `e`, exponent without
    padding or plus sign (1.235e3)."""
    text = f"{x:.{precision}e}"
    mantissa, _, exponent = text.partition("e")
    marker = "E" if upper else "e"
    return f"{mantissa}{marker}{int(exponent)}"


def _format_one(flags: str, width: str | None, precision: str | None, letter: str, arg: Any) -> str:
    """One conversion of `format`."""
    if letter == "s":
        body = display(arg)
        if precision is not None:
            body = body[: int(precision)]
    elif letter in "dixX":
        number = arg if type(arg) is int else int(arg) if type(arg) is float and arg == arg else arg
        if type(number) is not int:
            body = display(arg)
        elif letter in "xX":
            body = format(number, letter)
        else:
            body = str(number)
    elif letter in "eE":
        body = _format_exponent(float(_number_arg(arg)), 6 if precision is None else int(precision), letter == "E")
    elif letter == "g":
        body = format(float(_number_arg(arg)), "g")
    else:
        body = fixed_text(_number_arg(arg), 6 if precision is None else int(precision))
    if "+" in flags and letter not in "s" and not body.startswith("-"):
        body = "+" + body
    size = int(width) if width else 0
    if len(body) >= size:
        return body
    if "-" in flags:
        return body.ljust(size)
    if "0" in flags and letter != "s":
        sign = body[0] if body[0] in "+-" else ""
        return sign + body[len(sign):].rjust(size - len(sign), "0")
    return body.rjust(size)


def _number_arg(arg: Any) -> int | float:
    """A numeric format argument (a numeric String counts as its number)."""
    t = type(arg)
    if t is int or t is float:
        return arg
    if t is str:
        try:
            return float(arg)
        except ValueError:
            pass
    raise SomaError("type", f"format(): expected a number, got {type_of(arg)}")


@builtin(GROUP, "format(fmt: String, args...) -> String",
         "printf subset: %d %s %f %.2f %8.2f %-8s %05d %.3e %%.", min_args=1, max_args=None)
def format_(fmt, *args):
    """format("%05.1f|%-3s|%d%%", 3.14159, "a", 7) = "003.1|a  |7%"."""
    template = expect_str("format", fmt)
    pieces: list[str] = []
    position = 0
    next_arg = 0
    for match in _FORMAT_SPEC.finditer(template):
        pieces.append(template[position:match.start()])
        position = match.end()
        flags, width, precision, letter = match.groups()
        if letter == "%":
            pieces.append("%")
            continue
        if next_arg >= len(args):
            raise SomaError("type", f"format(): not enough arguments for {template!r}")
        if max(int(width or 0), int(precision or 0)) > MAX_VALUE_LENGTH:
            raise SomaError("range", f"format(): {match.group(0)} asks for more than {MAX_VALUE_LENGTH} characters")
        pieces.append(_format_one(flags, width, precision, letter, args[next_arg]))
        check_length("format", sum(len(p) for p in pieces))  # one piece over the limit at most
        next_arg += 1
    pieces.append(template[position:])
    return "".join(pieces)


# ---------------------------------------------------------------- lists / slices / templates

@builtin(GROUP, "join(list: List, sep: String) -> String | join(left: List, right: List, key) -> List",
         "Join elements into a string, or inner-join two lists of rows on `key`.", min_args=1, max_args=3)
def join(items, sep="", key=None):
    """join(["a", "b"], "-") = "a-b"."""
    if type(sep) is list:
        return inner_join(items, sep, key)
    elements = expect_list("join", items)
    separator = sep if type(sep) is str else display(sep)
    texts = [x if type(x) is str else display(x) for x in elements]
    check_length("join", sum(map(len, texts)) + len(separator) * max(len(texts) - 1, 0))
    return separator.join(texts)


@builtin(GROUP, "slice(xs: List|String, start: Int, end?: Int) -> List|String",
         "Sub-list / substring, end exclusive; negative indexes count from the end; clamped.")
def slice_(xs, start, end=None):
    """slice([1, 2, 3], -2) = [2, 3]."""
    if type(xs) is not str:
        expect_list("slice", xs)
    begin = expect_int("slice", start)
    if end is None:
        return xs[begin:]
    return xs[begin:expect_int("slice", end)]


_PLACEHOLDER = re.compile(r"\{(\w+)\}")


def fill_template(template: str, values: dict) -> str:
    """Substitute each {key} with the display of its value; unknown keys stay."""
    def substitute(match: re.Match) -> str:
        key = match.group(1)
        return display(values[key]) if key in values else match.group(0)

    return _PLACEHOLDER.sub(substitute, template)


def pairs_to_map(name: str, pairs: tuple) -> dict:
    """key, value, key, value… as a Map (keys displayed as text)."""
    if len(pairs) % 2:
        raise SomaError("type", f"{name}() needs key-value pairs (an even number of arguments)")
    return {display(pairs[i]): pairs[i + 1] for i in range(0, len(pairs), 2)}


@builtin(GROUP, "render(template: String, key, value, ...) -> String",
         "Substitute {key} placeholders in a template string.", min_args=1, max_args=None)
def render(template, *pairs):
    """render("hi {name}", "name", "Ana") = "hi Ana"."""
    if len(pairs) == 1 and type(pairs[0]) is dict:
        return fill_template(expect_str("render", template), pairs[0])
    return fill_template(expect_str("render", template), pairs_to_map("render", pairs))


@builtin(GROUP, "render_each(rows: List<Map>, template: String) -> String",
         "Render the template once per row, substituting {field} from each map.")
def render_each(rows, template):
    """render_each([map("n", 1)], "<{n}>") = "<1>"."""
    text = expect_str("render_each", template)
    return "".join(fill_template(text, expect_map("render_each", row)) for row in expect_list("render_each", rows))


_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)*")


@builtin(GROUP, "word_count(text: String | docs: List) -> Map<String, Int>",
         "Lowercased word frequency of a string or of {content} docs.")
def word_count(source):
    """word_count("a b A") = {"a": 2, "b": 1}."""
    if type(source) is str:
        texts = [source]
    else:
        texts = [doc.get("content", "") if type(doc) is dict else display(doc)
                 for doc in expect_list("word_count", source)]
    counts: dict[str, int] = {}
    for text in texts:
        for word in _WORD.findall(display(text).lower()):
            counts[word] = counts.get(word, 0) + 1
    return counts
