"""Stored results (benchmarks/results/) say what made them and name no machine's private paths."""
from __future__ import annotations

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
ABSOLUTE = re.compile(r"""(?<![\w.])/(?:work|home|root|tmp|Users|mnt|data|scratch)/""")


def results_files():
    return sorted(p for p in RESULTS.iterdir() if p.suffix in (".json", ".md"))


def test_no_results_json_stores_an_absolute_path():
    """Paths in results are relative to the repository (a command quoted in prose may name /tmp)."""
    found = {p.name: ABSOLUTE.findall(p.read_text(encoding="utf-8")) for p in results_files() if p.suffix == ".json"}
    assert not {k: v for k, v in found.items() if v}, found


def test_the_absolute_path_finder_finds_one():
    assert ABSOLUTE.search('"data": "/work/shared/data/babi"') and not ABSOLUTE.search('"../shared/data/babi"')


def test_babi_real_settings_name_the_seeds_its_table_covers():
    stored = json.loads((RESULTS / "babi_real_1k.json").read_text(encoding="utf-8"))
    seeds_in_runs = sorted({int(s) for by_seed in stored["runs"].values() for s in by_seed})
    assert stored["settings"]["seeds"] == seeds_in_runs == stored["seeds_of_every_task"]


def test_repo_path_is_relative_to_the_repository(load_benchmark):
    common = load_benchmark("common")
    assert common.repo_path(ROOT / "benchmarks" / "results") == "benchmarks/results"
    assert common.repo_path(ROOT.parent / "shared" / "data" / "babi") == "../shared/data/babi"
