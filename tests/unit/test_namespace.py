"""One install namespace (issue 45): pyproject.toml lists every package it builds, each
mapped from the repository folder it lives in, all under ``invcrawl``. (The wheel
itself, installed into a fresh venv, is checked by tests/e2e/test_deploy.py.)"""

from __future__ import annotations

from support.layout import PACKAGE_DIRS, PACKAGES, REPO, folder_of, module_of


def test_every_folder_with_an_init_is_a_listed_package() -> None:
    found = sorted(
        module_of(init)
        for folder in set(PACKAGE_DIRS.values())
        for init in (REPO / folder).rglob("__init__.py")
        if "__pycache__" not in init.parts
    )
    assert found == sorted(PACKAGES)


def test_every_package_installs_under_invcrawl() -> None:
    assert {name.split(".")[0] for name in PACKAGES} == {"invcrawl"}
    assert {name.split(".")[0] for name in PACKAGE_DIRS} == {"invcrawl"}
    # each mapped folder is a top-level folder of the repository, holding its package
    for package, folder in PACKAGE_DIRS.items():
        assert (REPO / folder / "__init__.py").is_file(), package
        assert "/" not in folder


def test_the_layout_helpers_agree() -> None:
    assert folder_of("invcrawl.common.items") == "common"
    assert folder_of("invcrawl.cli") == "invcrawl"
    assert folder_of("common.items") is None
    assert module_of(REPO / "frontier" / "keys.py") == "invcrawl.frontier.keys"
    assert module_of(REPO / "common" / "extract" / "__init__.py") == "invcrawl.common.extract"
