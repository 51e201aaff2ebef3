from __future__ import annotations

from pathlib import Path

import pytest

from common.config import Config, ConfigError, configuration_table, load_config
from common.options import OPTIONS
from invcrawl.cli import build_parser, cli_values


def test_cli_beats_env_beats_default() -> None:
    env = {"INVCRAWL_CONCURRENCY": "3", "INVCRAWL_LEASE": "7.5", "INVCRAWL_BURST": "true"}
    config = load_config({"concurrency": 9}, env)
    assert config.concurrency == 9  # CLI
    assert config.lease == 7.5 and config.burst is True  # env
    assert config.max_tries == 5 and config.slots == 16  # defaults


def test_bad_environment_value_names_the_variable() -> None:
    with pytest.raises(ConfigError, match="INVCRAWL_SLOTS"):
        load_config({}, {"INVCRAWL_SLOTS": "zero"})
    with pytest.raises(ConfigError, match="INVCRAWL_REDIS: invalid Redis URL"):
        load_config({}, {"INVCRAWL_REDIS": "localhost:6379"})


def test_every_option_is_a_config_field_and_has_an_env_var() -> None:
    fields = set(Config.__dataclass_fields__)
    for option in OPTIONS:
        assert option.name in fields, option.name
        assert option.env == "INVCRAWL_" + option.name.upper()


def test_parser_builds_typed_values_from_flags() -> None:
    args = build_parser().parse_args(
        ["consume", "--redis", "redis://h:1/0", "--slots", "0,3", "--burst", "--no-robots"]
    )
    config = load_config(vars(args), {})
    assert config.consumer_slots == (0, 3) and config.burst and config.robots is False
    assert config.pinned_slots(8) == [0, 3]
    args = build_parser().parse_args(["crawl", "site", "-o", "out.jsonl", "--slots", "4"])
    config = load_config(cli_values(args), {})
    assert (config.sites, config.output, config.slots) == (("site",), Path("out.jsonl"), 4)
    args = build_parser().parse_args(["produce", "a", "b", "--sites", "list.txt"])
    config = load_config(cli_values(args), {"INVCRAWL_SITES": "ignored"})
    assert (config.sites, config.sites_file) == (("a", "b"), Path("list.txt"))
    config = load_config(
        cli_values(build_parser().parse_args(["produce"])), {"INVCRAWL_SITES": "x y"}
    )
    assert config.sites == ("x", "y")


def test_bad_flag_value_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        build_parser().parse_args(["produce", "x", "--slots", "0"])
    assert exc.value.code == 2
    assert "expected an integer >= 1" in capsys.readouterr().err


def test_partition_selects_slots() -> None:
    assert load_config({"partition": (1, 4)}, {}).pinned_slots(10) == [1, 5, 9]
    assert load_config({}, {}).pinned_slots(10) is None


def test_configuration_doc_matches_the_options() -> None:
    doc = (Path(__file__).parents[2] / "docs" / "configuration.md").read_text()
    assert configuration_table() in doc, "regenerate docs/configuration.md (see its header)"
