from __future__ import annotations

from pathlib import Path

import pytest

from invcrawl.cli import build_parser, cli_values
from invcrawl.common.settings.config import Config, ConfigError, configuration_table, load_config
from invcrawl.common.settings.options import OPTIONS
from invcrawl.consumer.run import worker_settings


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
        assert option.env == (option.variable or "INVCRAWL_" + option.name.upper())
    assert [o.variable for o in OPTIONS if o.variable] == ["INVCRAWL_CRAWL_ID"]


def test_parser_builds_typed_values_from_flags() -> None:
    args = build_parser().parse_args(
        ["consume", "--redis", "redis://h:1/0", "--slots", "0,3", "--burst", "--no-robots"]
    )
    config = load_config(vars(args), {})
    assert config.consumer_slots == (0, 3) and config.burst and config.robots is False
    assert worker_settings(config).serving.slots.pinned(8) == [0, 3]
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
    pinning = worker_settings(load_config({"partition": (1, 4)}, {})).serving.slots
    assert pinning.pinned(10) == [1, 5, 9]
    assert worker_settings(load_config({}, {})).serving.slots.pinned(10) is None


def test_configuration_doc_matches_the_options() -> None:
    doc = (Path(__file__).parents[2] / "docs" / "configuration.md").read_text()
    assert configuration_table() in doc, "regenerate docs/configuration.md (see its header)"


def test_a_child_gets_its_parents_typed_settings_back_as_they_were() -> None:
    """`crawl` hands each child its settings as typed values (INVCRAWL_SETTINGS): they
    come back equal, win over the INVCRAWL_* variables the child sees, and an embedded
    Redis's child gets the resolved data dir and no URL."""
    from invcrawl.children import child_env, child_settings

    parent = load_config(
        {
            "redis": "redis://u:p%40ss@h:6379/0",
            "host_delay": 0.1 + 0.2,
            "allow_hosts": ("a.org", "b.org"),
            "redis_ca": Path("certs/ca.pem"),
            "robots": False,
            "project": "Demo",
            "weight": 3,
        },
        {},
    )
    for command in ("consume", "produce"):
        env = child_env(parent, command)
        child = load_config({}, {**env, "INVCRAWL_LEASE": "5", "INVCRAWL_ROBOTS": "1"})
        for name in child_settings(command):
            assert getattr(child, name) == getattr(parent, name), name
    embedded = load_config({}, child_env(parent, "consume", embedded=True))
    assert embedded.redis is None and embedded.data_dir == parent.data_dir.resolve()
    with pytest.raises(ConfigError, match="INVCRAWL_SETTINGS"):
        load_config({}, {"INVCRAWL_SETTINGS": '{"no_such_option": 1}'})


def test_a_site_argument_holding_spaces_is_one_site() -> None:
    """The shell split the command line already: `crawl "docs/site with space"` is one
    site (it was split into three). INVCRAWL_SITES is a list: one per line when it has
    several lines (a path with a space), else separated by white space."""
    args = build_parser().parse_args(["crawl", "docs/site with space", "b c", "--", "-d"])
    assert load_config(cli_values(args), {}).sites == ("docs/site with space", "b c", "-d")
    parsed = cli_values(build_parser().parse_args(["produce"]))
    lines = {"INVCRAWL_SITES": "/srv/site with space\n https://docs.example.org/ \n\n"}
    assert load_config(parsed, lines).sites == ("/srv/site with space", "https://docs.example.org/")
    assert load_config(parsed, {"INVCRAWL_SITES": " a\tb  c "}).sites == ("a", "b", "c")
