"""Tests for soma.toml loading and validation (soma_kernel.project.settings)."""

import os

import pytest

from soma_kernel.core.errors import UserError
from soma_kernel.project.settings import load_project, parse_project_text

SEEDS = os.path.join(os.path.dirname(__file__), "seeds")


def test_seed_manifest_loads_every_section():
    config = load_project(os.path.join(SEEDS, "refund_agent"))
    assert config.agent == {"mock": "echo"}
    assert config.package["name"] == "services-corpus"
    assert config.verify.cells == ["Payments"]
    assert config.verify.eventually == ["paid", "rejected"]
    assert config.verify.before == {"paid": {"requires": ["authorized"]}}
    assert config.verify.after["rejected"] == {"never": ["paid", "authorized", "signed_off"]}
    assert config.verify.after["paid"] == {"never": ["rejected"]}
    assert config.verify.has_properties


def test_no_manifest_is_none():
    assert load_project(os.path.join(SEEDS, "triage_agent")) is None


def _error(text):
    with pytest.raises(UserError) as info:
        parse_project_text(text, "p/soma.toml")
    return str(info.value)


def test_unknown_section_points_at_header():
    message = _error('[agent]\nmock = "echo"\n\n[verfy]\nnever = ["x"]\n')
    assert message.startswith("error: p/soma.toml:4:2: unknown section [verfy]")
    assert "4 | [verfy]" in message
    assert message.splitlines()[2].endswith("^^^^^")


def test_unknown_agent_key():
    message = _error('[agent]\nmock = "echo"\nmodle = "x"\n')
    assert message.startswith("error: p/soma.toml:3:1: unknown key 'modle' in [agent]")


def test_unknown_key_in_after_table():
    message = _error('[verify.after.paid]\nnevr = ["x"]\n')
    assert message.startswith("error: p/soma.toml:2:1: unknown key 'nevr' in [verify.after.paid]")


def test_unknown_key_in_before_table():
    message = _error('[verify.before.paid]\nrequire = ["x"]\n')
    assert "unknown key 'require' in [verify.before.paid]" in message


def test_wrong_types():
    assert "'agent.retries' must be an integer, found a string" in _error('[agent]\nretries = "3"\n')
    assert "'verify.never' must be a list of strings, found a string" in _error('[verify]\nnever = "x"\n')
    assert "'verify.deadlock_free' must be a boolean" in _error('[verify]\ndeadlock_free = 1\n')


def test_empty_anchored_lists_are_errors():
    message = _error('[verify.before.paid]\nrequires = []\n')
    assert message.startswith("error: p/soma.toml:2:1: 'verify.before.paid.requires' is an empty list")
    assert "'verify.after.x.never' is an empty list" in _error('[verify.after.x]\nnever = []\n')


def test_empty_top_level_lists_state_no_property():
    settings = parse_project_text('[verify]\ncells = []\neventually = []\nnever = []\nalways = []\n', "x").verify
    assert settings.cells == [] and settings.never == [] and settings.eventually == []
    assert not settings.has_properties


def test_toml_syntax_error_has_position():
    message = _error('[agent]\nmock = \n')
    assert message.startswith("error: p/soma.toml:2:")
    assert "invalid TOML" in message


def test_models_tables_are_validated_like_agent():
    config = parse_project_text('[models.fast]\nmodel = "m"\nretries = 2\n', "x")
    assert config.models == {"fast": {"model": "m", "retries": 2}}
    assert "unknown key 'colour' in [models.fast]" in _error('[models.fast]\ncolour = "m"\n')


def test_unknown_key_suggests_the_close_name():
    message = _error('[verify]\neventualy = ["done"]\n')
    assert message.splitlines()[-1] == "  hint: did you mean 'eventually'? rename the key"


def test_unknown_section_without_a_close_name_says_remove_it():
    message = _error('[zebra]\nx = 1\n')
    assert message.splitlines()[-1] == "  hint: remove the section, or use one of the known names"


def test_a_bad_manifest_is_named_as_the_program_path_gives_it(tmp_path, monkeypatch):
    from soma_kernel.project.loader import load

    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "a.cell").write_text('cell A {\n    on f() { return 1 }\n}\n', encoding="utf-8")
    (tmp_path / "app" / "soma.toml").write_text('[agnet]\n', encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UserError) as info:
        load("app/a.cell")
    assert str(info.value).startswith("error: app/soma.toml:1:2: unknown section [agnet]")
    assert str(info.value).endswith("hint: did you mean 'agent'? rename the section")
