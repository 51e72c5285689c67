"""Results store paths as the user wrote them, relative to the repository, links not followed.

A checkout whose ``../shared`` is a symbolic link (to another disk, or to a folder shared by several
checkouts) must store ``../shared/data/babi``, not the path to where the link points.
"""
from __future__ import annotations

import os

import pytest


@pytest.fixture()
def linked_layout(tmp_path, load_benchmark, monkeypatch):
    """``tmp/checkout/main`` (the repository) beside ``tmp/checkout/shared``, a link to
    ``tmp/elsewhere/disk/shared``; returns (provenance with its ROOT there, the checkout folder)."""
    provenance = load_benchmark("provenance")
    checkout = tmp_path / "checkout"
    (checkout / "main" / "results").mkdir(parents=True)
    target = tmp_path / "elsewhere" / "disk" / "shared"
    (target / "data" / "babi").mkdir(parents=True)
    (checkout / "shared").symlink_to(target, target_is_directory=True)
    monkeypatch.setattr(provenance, "ROOT", checkout / "main")
    return provenance, checkout


def test_a_folder_under_a_linked_shared_is_stored_as_written(linked_layout):
    provenance, checkout = linked_layout
    assert os.path.islink(checkout / "shared")
    assert provenance.repo_path(checkout / "main" / ".." / "shared" / "data" / "babi") == "../shared/data/babi"
    assert provenance.repo_path(checkout / "shared" / "data" / "babi") == "../shared/data/babi"
    assert provenance.repo_path(checkout / "main" / "results") == "results"
    assert provenance.repo_path(checkout / "main") == "."


def test_a_relative_path_under_a_linked_shared(linked_layout, monkeypatch):
    """As a script run from the repository root reads ``--data ../shared/data/babi``."""
    provenance, checkout = linked_layout
    monkeypatch.chdir(checkout / "main")
    assert provenance.repo_path("../shared/data/babi") == "../shared/data/babi"
    assert provenance.repo_path("results/x.json") == "results/x.json"


def test_a_repository_reached_through_a_link(linked_layout, tmp_path):
    """The repository's own folder spelled through a link is still the repository."""
    provenance, checkout = linked_layout
    alias = tmp_path / "alias"
    alias.symlink_to(checkout / "main", target_is_directory=True)
    assert provenance.repo_path(alias / "results") == "results"


def test_the_link_target_given_itself_is_where_it_is(linked_layout, tmp_path):
    """A path written to the link's target names that folder (nothing to undo there)."""
    provenance, _ = linked_layout
    assert provenance.repo_path(tmp_path / "elsewhere" / "disk" / "shared" / "data") == \
        "../../elsewhere/disk/shared/data"
