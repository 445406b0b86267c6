"""``[tool.hlo-rewrite]`` looked for in pyproject.toml files (hlo_rewrite.config): every TOML
spelling of the table is found; a file that names the tool only where no table can be (a
project's name, a dependency, a script) is passed over without being parsed."""

from __future__ import annotations

import sys

import pytest

from hlo_rewrite import config
from hlo_rewrite.config import ConfigError, find_config

#: TOML texts that hold the table with passes = "none", in each way TOML allows
HOLDING = [
    '[tool.hlo-rewrite]\npasses = "none"\n',
    '[ tool . "hlo-rewrite" ]\npasses = "none"\n',
    "['tool'.'hlo-rewrite']\npasses = \"none\"\n",
    '["tool"."hlo-rewrite"]\npasses = "none"\n',
    'tool.hlo-rewrite.passes = "none"\n',
    'tool . hlo-rewrite = { passes = "none" }\n',
    '[tool]\nhlo-rewrite = { passes = "none" }\n',
    '[ "tool" ]\n"hlo-rewrite".passes = "none"\n',
    'tool = { hlo-rewrite = { passes = "none" } }\n',
    "tool={'hlo-rewrite'={passes='none'}}\n",
    '[tool."hlo\\u002Drewrite"]\npasses = "none"\n',
    '[project]\nname = "x"\n\n[tool.other]\na = 1\n\n[tool.hlo-rewrite]\npasses = "none"\n',
]

#: texts that name the tool where no table can be: each is also not valid TOML, so reading one
#: would be an error
NAMING_ONLY = [
    '[project]\nname = "hlo-rewrite"\n[[\n',
    '[project]\ndependencies = ["hlo-rewrite>=0.1"]\n[[\n',
    '[project.scripts]\nhlo-rewrite = "hlo_rewrite.__main__:console_main"\n[[\n',
    '[tool.ruff]\nextend-exclude = ["hlo-rewrite"]\n[[\n',
]


@pytest.mark.parametrize("text", HOLDING)
def test_every_spelling_of_the_table_is_found(tmp_path, text):
    (tmp_path / "pyproject.toml").write_text(text, encoding="utf-8")
    found = find_config(str(tmp_path / "sub"))
    assert found is not None and found.values == {"passes": "none"}


@pytest.mark.parametrize("text", NAMING_ONLY)
def test_a_file_that_cannot_hold_the_table_is_not_parsed(tmp_path, text, monkeypatch):
    (tmp_path / "pyproject.toml").write_text(text, encoding="utf-8")
    monkeypatch.delitem(sys.modules, "tomllib", raising=False)
    assert find_config(str(tmp_path)) is None
    assert "tomllib" not in sys.modules  # the TOML reader was not even loaded


@pytest.mark.parametrize("text", NAMING_ONLY)
def test_with_a_tool_table_such_a_file_is_parsed(tmp_path, text):
    """A [tool] table may hold an ``hlo-rewrite`` key of its own: the file is read, and here
    found not to be TOML."""
    (tmp_path / "pyproject.toml").write_text("[tool]\n" + text, encoding="utf-8")
    with pytest.raises(ConfigError, match="not valid TOML"):
        find_config(str(tmp_path))


def test_the_nearest_file_holding_the_table_wins(tmp_path):
    (tmp_path / "pyproject.toml").write_text(HOLDING[0], encoding="utf-8")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "pyproject.toml").write_text(NAMING_ONLY[0], encoding="utf-8")
    found = find_config(str(tmp_path / "sub"))
    assert found is not None and found.path == str(tmp_path / "pyproject.toml")
    assert config.TABLE == ("tool", "hlo-rewrite")
