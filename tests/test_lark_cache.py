"""The lark parser cache (`syntax/larkcache.py`): written when absent, refused,
reported and replaced when damaged or foreign, unable to run code when planted,
harmless when it cannot be written, and a parser loaded from it behaves exactly
like the one lark builds."""

from __future__ import annotations

import functools
import hashlib
import io
import os
import pickle
import re
import subprocess
import sys
import tempfile
import time
from array import array
from pathlib import Path

import pytest
from lark import Lark, Token
from lark.exceptions import UnexpectedInput

from soma_kernel.core.diagnostics import SomaSyntaxError
from soma_kernel.syntax import larkcache, larkregex, parser

TESTS = Path(__file__).parent
REPO = TESTS.parent
PROGRAMS = sorted(p for folder in ("seeds", "lang_cases", "check_cases", "verify_cases")
                  for p in (TESTS / folder).rglob("*.cell"))
SMALL = "cell C { on f(x: Int) { return x + 1 } }"


def grammar_and_options():
    """What `parser._lark()` hands the cache."""
    return parser._grammar_text(), parser._lark_options()


def cached(directory):
    """The parser through the cache in directory."""
    return larkcache.cached_lark(*grammar_and_options(), directory)


@functools.lru_cache(maxsize=None)
def small_tree_by_lark():
    """The tree lark's own parser gives for SMALL."""
    grammar, options = grammar_and_options()
    return shape(Lark(grammar, **options).parse(SMALL, start="start"))


def parses_small(lark_parser) -> bool:
    """The parser reads a small program into the very tree lark's own parser gives."""
    return shape(lark_parser.parse(SMALL, start="start")) == small_tree_by_lark()


def cache_files(directory: Path) -> list:
    """The cache files in directory (temporary ones too)."""
    return sorted(p.name for p in directory.iterdir()) if directory.exists() else []


def only_file(directory: Path) -> Path:
    """The one cache file in directory."""
    (path,) = directory.iterdir()
    return path


# ---------------------------------------------------------------- writing and reading


def test_an_absent_cache_is_built_and_written_then_loaded(tmp_path, monkeypatch):
    directory = tmp_path / "cache"
    assert parses_small(cached(directory))
    path = only_file(directory)
    key = larkcache.build_key(*grammar_and_options())
    assert path.name == f"lark-{key[:32]}.pickle"
    assert path.read_bytes().startswith(f"soma-lark {key} ".encode())
    monkeypatch.setattr(larkcache, "_build", lambda grammar, options: pytest.fail("not loaded"))
    assert parses_small(cached(directory))


def test_writing_a_cache_file_deletes_only_stale_files_of_other_builds(tmp_path):
    directory = tmp_path / "cache"
    directory.mkdir()
    stale, recent, unrelated = directory / "lark-old.pickle", directory / "lark-other.pickle", directory / "notes.txt"
    for path in (stale, recent, unrelated):
        path.write_bytes(b"x")
    long_ago = time.time() - larkcache.STALE_AFTER_SECONDS - 60
    os.utime(stale, (long_ago, long_ago))
    os.utime(unrelated, (long_ago, long_ago))
    assert parses_small(cached(directory))
    names = sorted(path.name for path in directory.iterdir())
    key = larkcache.build_key(*grammar_and_options())
    assert names == sorted([f"lark-{key[:32]}.pickle", "lark-other.pickle", "notes.txt"])


@pytest.fixture(scope="module")
def good_file(tmp_path_factory) -> bytes:
    """The bytes of a whole cache file for the Soma grammar."""
    directory = tmp_path_factory.mktemp("good")
    cached(directory)
    return only_file(directory).read_bytes()


def cache_path(directory: Path) -> Path:
    """Where the cache file of the Soma grammar goes in directory."""
    return directory / f"lark-{larkcache.build_key(*grammar_and_options())[:32]}.pickle"


def signed(payload: bytes) -> bytes:
    """payload behind the header a cache file of this build has (the format is public: anyone can write it)."""
    key = larkcache.build_key(*grammar_and_options())
    return f"soma-lark {key} {hashlib.sha256(payload).hexdigest()}\n".encode() + payload


def assert_replaced_and_reported(directory: Path, capsys, monkeypatch):
    """The bad file in directory was refused: the parser parses, the file now holds a good
    cache (loaded next time without building), and stderr said which file was replaced."""
    path = cache_path(directory)
    bad = path.read_bytes() if not path.is_symlink() else None
    assert parses_small(cached(directory))
    assert not path.is_symlink() and path.read_bytes() != bad
    assert f"soma-kernel: replaced the parser cache {path}: " in capsys.readouterr().err
    monkeypatch.setattr(larkcache, "_build", lambda grammar, options: pytest.fail("not rewritten"))
    assert parses_small(cached(directory))
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("damage", ["garbage after the header", "no header", "truncated", "a flipped byte",
                                    "a flipped digest", "trailing bytes", "header only", "empty",
                                    "not a parser", "a parser of another grammar"])
def test_a_damaged_cache_file_is_refused_reported_and_replaced(tmp_path, damage, good_file, capsys, monkeypatch):
    header = good_file[:good_file.index(b"\n") + 1]
    payload = good_file[len(header):]
    middle = len(good_file) // 2
    other = larkcache.cached_lark('start: "a"\n', {"parser": "lalr"}, str(tmp_path / "other"))
    assert other.parse("a").data == "start"
    cache_path(tmp_path).write_bytes({
        "garbage after the header": header + os.urandom(5000),
        "no header": payload,
        "truncated": good_file[:middle],
        # a byte inside a stored string: the pickle still loads, into another parser
        "a flipped byte": good_file[:middle] + bytes([good_file[middle] ^ 1]) + good_file[middle + 1:],
        "a flipped digest": header[:-2] + (b"0" if header[-2:-1] != b"0" else b"1") + b"\n" + payload,
        "trailing bytes": good_file + b"\x00",
        "header only": header,
        "empty": b"",
        "not a parser": signed(pickle.dumps({"parser": "lalr"})),
        "a parser of another grammar": signed(only_file(tmp_path / "other").read_bytes().split(b"\n", 1)[1]),
    }[damage])
    assert_replaced_and_reported(tmp_path, capsys, monkeypatch)


def test_an_absent_file_is_written_without_a_report(tmp_path, capsys):
    assert parses_small(cached(tmp_path))
    assert cache_path(tmp_path).exists() and capsys.readouterr().err == ""


# ---------------------------------------------------------------- planted files run nothing


def short_text(text: str) -> bytes:
    """pickle's SHORT_BINUNICODE of text."""
    data = text.encode()
    return b"\x8c" + bytes([len(data)]) + data + b"\x94"


def call_of_global(module: str, name: str, *args: str) -> bytes:
    """A protocol-4 pickle that calls the global module.name with string args
    (STACK_GLOBAL, which resolves a dotted name through attributes)."""
    return (b"\x80\x04" + short_text(module) + short_text(name) + b"\x93" + b"("
            + b"".join(short_text(arg) for arg in args) + b"tR.")


class CallOf:
    """Pickles as a call of function with args (pickle names the function by its own module)."""

    def __init__(self, function, *args):
        self.function, self.args = function, args

    def __reduce__(self):
        return self.function, self.args


def planted_payloads(marker: Path) -> dict:
    """Pickles that, unpickled without an exact allow-list, create marker: through dotted names under
    lark, names outside lark, a nested pickle, and lark's own classes called with arguments."""
    touch = f"touch {marker}"
    grammar = 'start: "a"\n'
    return {
        "lark.lark os.system": call_of_global("lark.lark", "os.system", touch),
        "lark lark.os.system": call_of_global("lark", "lark.os.system", touch),
        "lark.utils os.mkdir": call_of_global("lark.utils", "os.mkdir", str(marker)),
        "soma_kernel.syntax.parser os.system": call_of_global("soma_kernel.syntax.parser", "os.system", touch),
        "lark.lark pickle.loads": (b"\x80\x04" + short_text("lark.lark") + short_text("pickle.loads") + b"\x93("
                                   + b"C" + bytes([len(pickle.dumps(CallOf(os.mkdir, str(marker))))])
                                   + pickle.dumps(CallOf(os.mkdir, str(marker))) + b"tR."),
        "os.system": pickle.dumps(CallOf(os.system, touch)),
        "builtins.exec": pickle.dumps(CallOf(exec, f"open({str(marker)!r}, 'w')")),
        "lark.lark.Lark with a cache path": pickle.dumps(
            CallOf(functools.partial(Lark, parser="lalr", cache=str(marker)), grammar)),
        "lark.lark.Lark called directly": call_of_global("lark.lark", "Lark", grammar),
        "Lark.open": call_of_global("lark.lark", "Lark.open", str(marker)),
        "a class method by its qualified name": call_of_global("lark.lexer", "Token.new_borrow_pos", "A", "b", "c"),
    }


@pytest.mark.parametrize("attack", sorted(planted_payloads(Path("m"))))
def test_a_planted_cache_file_runs_nothing_and_is_replaced(tmp_path, attack, good_file, capsys, monkeypatch):
    marker = tmp_path / "ran"
    cache_path(tmp_path).write_bytes(signed(planted_payloads(marker)[attack]))
    assert_replaced_and_reported(tmp_path, capsys, monkeypatch)
    assert not marker.exists()


def broken_parsers() -> dict:
    """Parsers that unpickle from a signed file but fail inside lark when they parse."""
    def no_table(built):
        built.parser.parser.parser.parse_table.states = {}

    def no_callbacks(built):
        callbacks = built.parser.parser.parser.callbacks
        for rule in callbacks:
            callbacks[rule] = 0

    def wrong_lexer(built):
        built.parser.lexer.lexer.lexers = {}

    return {"no parse table": no_table, "tree callbacks that are not callable": no_callbacks,
            "no lexers": wrong_lexer}


@pytest.mark.parametrize("damage", sorted(broken_parsers()))
def test_a_cache_file_whose_parser_fails_while_parsing_is_replaced_and_parsing_goes_on(tmp_path, damage, capsys,
                                                                                      monkeypatch):
    expected = parser.parse(SMALL, "p.cell")
    built = larkcache._build(*grammar_and_options())
    broken_parsers()[damage](built)
    cache_path(tmp_path).write_bytes(signed(larkcache._pickled(built, [])))
    monkeypatch.setattr(larkcache, "default_directory", lambda: str(tmp_path))
    monkeypatch.setattr(parser, "_LARK", None)
    monkeypatch.setattr(parser, "_KEYWORD_TYPES", None, raising=False)
    assert parser.parse(SMALL, "p.cell") == expected
    err = capsys.readouterr().err
    assert f"soma-kernel: replaced the parser cache {cache_path(tmp_path)}: the parser it held failed (" in err
    assert not larkcache.loaded_from_file(parser._LARK)
    monkeypatch.setattr(parser, "_LARK", None)
    monkeypatch.setattr(larkcache, "_build", lambda grammar, options: pytest.fail("the file was not rewritten"))
    assert parser.parse(SMALL, "p.cell") == expected


def test_the_unpickler_resolves_exact_names_only():
    allowed = larkcache._allowed_globals()
    assert all("." not in name for _, name in allowed)
    unpickler = larkcache._Unpickler(io.BytesIO(b""), parser._lark_options())
    for module, name in [("lark.lark", "os"), ("lark", "Lark"), ("lark.tree", "Tree.__init__"),
                         ("lark.lexer", "re"), ("functools", "reduce"), ("copyreg", "_reconstructor")]:
        with pytest.raises(pickle.UnpicklingError):
            unpickler.find_class(module, name)
    stand_in = unpickler.find_class("lark.lark", "Lark")
    assert type(stand_in()) is Lark and stand_in is not Lark
    with pytest.raises(pickle.UnpicklingError):
        stand_in("start: 'a'")


def test_a_cache_file_that_never_ends_is_read_only_up_to_the_limit(tmp_path):
    # /dev/zero behind the cache file's name, in a process limited to 1 GB: reading it whole would fail
    script = ("import resource, sys; resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30)); "
              "from soma_kernel.syntax import parser, larkcache; "
              "p = larkcache.cached_lark(parser._grammar_text(), parser._lark_options(), sys.argv[1]); "
              "print(p.parse('cell C { }', start='start').data)")
    os.symlink("/dev/zero", cache_path(tmp_path))
    done = subprocess.run([sys.executable, "-c", script, str(tmp_path)], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=120)
    assert (done.returncode, done.stdout) == (0, "start\n"), done.stderr[-2000:]
    assert f"longer than {larkcache.MAX_FILE_BYTES} bytes" in done.stderr
    assert not cache_path(tmp_path).is_symlink()


def test_a_planted_lark_cache_in_the_temporary_folder_is_never_read(tmp_path, monkeypatch):
    # lark's own cache=True unpickles /tmp/.lark_cache_<user>_<digest>_<python>.tmp with no allow-list
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    grammar, options = grammar_and_options()
    Lark(grammar, **options, cache=True)
    (lark_file,) = tmp_path.glob(".lark_cache_*")
    marker = tmp_path / "ran"
    digest = lark_file.read_bytes().split(b"\n", 1)[0]
    lark_file.write_bytes(digest + b"\n" + pickle.dumps(CallOf(os.mkdir, str(marker))))
    assert parses_small(cached(tmp_path / "cache"))
    assert parses_small(larkcache.cached_lark(grammar, options, None))
    assert not marker.exists()


def test_an_unwritable_cache_folder_still_parses(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    assert parses_small(cached(blocker / "cache"))
    assert cache_files(tmp_path) == ["a-file"]


def test_a_parser_that_does_not_pickle_leaves_no_file(tmp_path, monkeypatch):
    class Refusing(pickle.Pickler):
        def reducer_override(self, obj):
            raise pickle.PicklingError("a newer lark's object")

    monkeypatch.setattr(larkcache, "_Pickler", Refusing)
    assert parses_small(cached(tmp_path / "cache"))
    assert cache_files(tmp_path / "cache") == []


def test_no_cache_folder_means_lark_builds(monkeypatch):
    builds = []
    real_build = larkcache._build

    def counted_build(grammar, options):
        builds.append(grammar)
        return real_build(grammar, options)

    monkeypatch.setattr(larkcache, "_build", counted_build)
    assert parses_small(larkcache.cached_lark(*grammar_and_options(), None))
    assert len(builds) == 1


def test_an_unchecked_lark_release_always_builds_and_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.setattr(larkcache.lark, "__version__", "9.0.0")
    assert parses_small(cached(tmp_path))
    assert cache_files(tmp_path) == []


def test_the_key_follows_grammar_options_and_lark_release(monkeypatch):
    grammar, options = grammar_and_options()
    key = larkcache.build_key(grammar, options)
    assert larkcache.build_key(grammar, parser._lark_options()) == key
    assert larkcache.build_key(grammar + "\n", options) != key
    assert larkcache.build_key(grammar, {**options, "start": ["start"]}) != key
    monkeypatch.setattr(larkcache.lark, "__version__", "1.3.99")
    assert larkcache.build_key(grammar, options) != key


def test_the_default_folder_is_the_users_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert larkcache.default_directory() == str(tmp_path / "soma-kernel")
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/path")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert larkcache.default_directory() == str(tmp_path / "home" / ".cache" / "soma-kernel")


# ---------------------------------------------------------------- the loaded parser equals lark's


@pytest.fixture(scope="module")
def both_parsers(tmp_path_factory):
    """(loaded, built): a parser loaded from a cache file that another process
    wrote under another string-hash seed, and the very parser it wrote, as lark
    loads it from its own cache file of it (an LALR table's state numbers
    depend on the build, so both must come from one build)."""
    directory = tmp_path_factory.mktemp("lark-cache")
    lark_file = directory / "lark-own-cache.tmp"
    script = ("import sys; from lark import Lark; from soma_kernel.syntax import parser, larkcache; "
              "g, o = parser._grammar_text(), parser._lark_options(); built = Lark(g, **o, cache=sys.argv[2]); "
              "key = larkcache.build_key(g, o); "
              "assert larkcache._write(built, sys.argv[1] + f'/lark-{key[:32]}.pickle', key, o); "
              "print(hash('soma'))")
    env = {**os.environ, "PYTHONPATH": str(REPO), "PYTHONHASHSEED": "1234"}
    done = subprocess.run([sys.executable, "-c", script, str(directory), str(lark_file)], env=env,
                          capture_output=True, text=True, check=True)
    assert int(done.stdout) != hash("soma"), "the writer must hash strings differently"
    grammar, options = grammar_and_options()
    built = Lark(grammar, **options, cache=str(lark_file))
    original = larkcache._build
    larkcache._build = lambda grammar, options: pytest.fail("not loaded from the file")
    try:
        loaded = cached(directory)
    finally:
        larkcache._build = original
    return loaded, built


def shape(value):
    """Everything a value holds, spans and token positions included, as plain data."""
    if isinstance(value, Token) and value.type == "RULE":
        return ("str", str(value))  # a rule's name: a Token when lark built the grammar, a str when it loaded it
    if isinstance(value, Token):
        return ("Token", value.type, str(value), value.start_pos, value.line, value.column,
                value.end_line, value.end_column, value.end_pos)
    if isinstance(value, (str, int, float, bool, type(None))):
        return (type(value).__name__, value)
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, [shape(v) for v in value])
    if isinstance(value, dict):
        return ("dict", [(shape(k), shape(v)) for k, v in value.items()])
    slots = [n for kind in type(value).__mro__ for n in getattr(kind, "__slots__", ())]
    fields = dict(getattr(value, "__dict__", {}))
    fields.update((n, getattr(value, n)) for n in slots if hasattr(value, n))
    return (type(value).__name__, sorted((name, shape(v)) for name, v in fields.items()))


def outcome(read, text):
    """What one parser entry point gives for text: the whole AST or the whole error."""
    try:
        return ("ok", shape(read(text, "p.cell")))
    except SomaSyntaxError as err:
        return ("error", shape(err.diagnostic), err.incomplete)


def broken_variants(text: str) -> list:
    """The program cut short at two places, and with usual mistakes written into it."""
    cuts = [text[:len(text) * k // 3] for k in (1, 2)]
    lines = text.splitlines(keepends=True)
    mistakes = []
    for number, junk in enumerate((";", "elif x {", "}", "x === 1", "let on = 1", '"open')):
        at = len(lines) * (number + 1) // 7
        mistakes.append("".join(lines[:at]) + junk + "\n" + "".join(lines[at:]))
    return cuts + mistakes


def program_texts() -> list:
    """The test programs' texts."""
    return [path.read_text(encoding="utf-8") for path in PROGRAMS]


def with_parser(monkeypatch, lark_parser, read, text):
    """outcome() with `parser._lark()` answering lark_parser."""
    monkeypatch.setattr(parser, "_LARK", lark_parser)
    return outcome(read, text)


def assert_same_outcomes(monkeypatch, both_parsers, read, texts) -> dict:
    """Both parsers give equal outcomes for texts through read; how many of each kind."""
    loaded, built = both_parsers
    kinds = {"ok": 0, "error": 0}
    for text in texts:
        fast = with_parser(monkeypatch, loaded, read, text)
        assert fast == with_parser(monkeypatch, built, read, text), text
        kinds[fast[0]] += 1
    return kinds


def test_both_parsers_give_equal_asts_for_the_test_programs(both_parsers, monkeypatch):
    texts = program_texts()
    assert len(texts) >= 20
    kinds = assert_same_outcomes(monkeypatch, both_parsers, parser.parse, texts)
    assert kinds["ok"] >= 20


def test_both_parsers_give_equal_errors_for_broken_programs(both_parsers, monkeypatch):
    # as notebook cells: the errors' `incomplete` flag is is_complete()'s answer
    texts = [variant for text in program_texts() for variant in broken_variants(text)]
    kinds = assert_same_outcomes(monkeypatch, both_parsers, parser.parse_fragment, texts)
    assert kinds["error"] > 120


def raw_outcome(lark_parser, text: str, start: str):
    """lark's own answer for the scanned text: the tree with every token's
    place, or the error with the terminals it expected."""
    try:
        return ("tree", shape(lark_parser.parse(parser._scan(text).clean, start=start)))
    except UnexpectedInput as exc:
        token = getattr(exc, "token", None)
        return ("error", type(exc).__name__, sorted(getattr(exc, "expected", None) or ()),
                sorted(getattr(exc, "allowed", None) or ()), exc.pos_in_stream,
                None if token is None else (token.type, str(token), token.start_pos),
                getattr(exc.state, "position", exc.state) if hasattr(exc, "state") else None)


def test_both_parsers_give_equal_trees_and_expected_terminals(both_parsers):
    loaded, built = both_parsers
    programs = [variant for text in program_texts() for variant in broken_variants(text)]
    expressions = ["1 + f(x", "a.b |> g(1)", "x => x + 1", "[1, 2", ")", "m ?? 0 * -y"]
    for text, start in [(t, "start") for t in programs] + [(e, "expr_only") for e in expressions]:
        assert raw_outcome(loaded, text, start) == raw_outcome(built, text, start), text


def test_both_parsers_have_the_same_terminals_and_tables(both_parsers):
    loaded, built = both_parsers

    def terminals(lark_parser):
        return [(t.name, t.pattern.type, t.pattern.value, sorted(t.pattern.flags), t.priority)  # a set, or a list from lark's cache
                for t in lark_parser.terminals]

    def table(lark_parser):
        states = lark_parser.parser.parser.parser.parse_table.states
        return {state: {token: (action.name, target if isinstance(target, int) else str(target))
                        for token, (action, target) in actions.items()}
                for state, actions in states.items()}

    assert terminals(loaded) == terminals(built)
    assert table(loaded) == table(built)
    assert len({t.name for t in loaded.terminals}) > 50


# ---------------------------------------------------------------- the lexers' precompiled patterns


def test_the_loaded_lexers_compile_every_pattern_from_the_file(both_parsers, monkeypatch):
    loaded, _ = both_parsers
    stand_in = loaded.parser.lexer.lexer.root_lexer.re
    assert isinstance(stand_in, larkregex.PrecompiledRe) and len(stand_in.entries) > 100
    for text in program_texts():
        with_parser(monkeypatch, loaded, parser.parse, text)
    assert stand_in.built and set(stand_in.built) <= set(stand_in.entries)
    fresh = larkregex.PrecompiledRe(stand_in.entries.values())
    monkeypatch.setattr(larkregex.re, "compile", lambda *args: pytest.fail("compiled by re"))
    for pattern, flags in stand_in.entries:
        assert fresh.compile(pattern, flags) == stand_in.built.get((pattern, flags), fresh.compile(pattern, flags))


@pytest.mark.parametrize("pattern,flags", [
    ("(?P<NAME>[A-Za-z_]\\w*)|(?P<INT>\\d+)", 0), ("(?i:select)|(?P<X>x+?)", 0), ("\\s+|#[^\\n]*", re.M),
    ("(?P<S>\"(?:[^\"\\\\]|\\\\.)*\")", re.S), (b"(?P<B>[\\x00-\\x7f]+)", 0)])
def test_a_stored_program_builds_the_pattern_re_compiles(pattern, flags):
    entry = larkregex._entry(pattern, flags)
    assert entry is not None
    rebuilt = larkregex.PrecompiledRe([entry]).compile(pattern, flags)
    assert rebuilt == re.compile(pattern, flags) and rebuilt.groupindex == re.compile(pattern, flags).groupindex


def broken_entries(entry: tuple) -> list:
    """entry with each field made wrong: opcodes re's validator refuses, group tables that do
    not fit the program, fields of the wrong type, a short entry."""
    pattern, flags, result_flags, code, groups, groupindex, indexgroup = entry
    words = larkregex._WORD
    return [
        (pattern, flags, result_flags, b"not a program", groups, groupindex, indexgroup),
        (pattern, flags, result_flags, array(words, [999999, 1, 2]).tobytes(), groups, groupindex, indexgroup),
        (pattern, flags, result_flags, code[: len(code) // 2], groups, groupindex, indexgroup),
        (pattern, flags, result_flags, code, groups + 5, groupindex, indexgroup),
        (pattern, flags, result_flags, code, groups, (("A", 40),), indexgroup),
        (pattern, flags, result_flags, code, groups, groupindex, indexgroup[:1]),
        (pattern, flags, result_flags, code, groups, groupindex, (1,) * len(indexgroup)),
        (pattern, flags, "0", code, groups, groupindex, indexgroup),
        (pattern, flags, result_flags, list(code), groups, groupindex, indexgroup),
        (pattern, flags, code),
    ]


def test_a_pattern_without_a_working_program_is_compiled_by_re():
    entry = larkregex._entry("(?P<A>a)|(?P<B>b)", 0)
    for broken in broken_entries(entry):
        stand_in = larkregex.PrecompiledRe([broken])
        rebuilt = stand_in.compile("(?P<A>a)|(?P<B>b)")
        assert rebuilt == re.compile("(?P<A>a)|(?P<B>b)"), broken
        assert rebuilt.match("b").lastgroup == "B"
    stand_in = larkregex.PrecompiledRe([entry])
    assert stand_in.compile("c+") == re.compile("c+") and stand_in.match("c+", "cc").group() == "cc"
    assert stand_in.error is re.error and stand_in.IGNORECASE == re.IGNORECASE
