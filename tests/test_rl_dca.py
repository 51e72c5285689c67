"""experiments/rl_dca.py: the runs start where they should, differ only in their loss, and a paired difference says
only what two standard errors allow, by seed and by article."""
import pytest

from conftest import load_script  # noqa: E402  (tests/ is on sys.path under pytest)

rl_dca = load_script("rl_dca")


def test_seed_0_starts_from_the_shipped_checkpoint_and_the_others_from_their_seeds_mle_run():
    assert rl_dca.STARTS[0] == "data/checkpoints/dca3-synthnews-long"
    for seed in (1, 2):
        assert f"--init {rl_dca.STARTS[seed]} " in rl_dca.command("rl", seed)
        assert rl_dca.STARTS[seed].endswith(f"k1-s{seed}")        # K = 1, the checkpoint's command, another seed


def test_the_variants_differ_only_in_their_loss():
    strip = {v: rl_dca.command(v, 1).replace(rl_dca.VARIANTS[v], "").replace(f"/{v}-s1", "/RUN")
             for v in rl_dca.VARIANTS}
    assert len(set(strip.values())) == 1, strip
    assert "--gamma 0" in rl_dca.command("control", 0) and "--gamma" not in rl_dca.command("rl", 0)


def rows(diffs, per_article):
    """Three seeds' scores of a and b: b at 0.5 everywhere, a at 0.5 plus the given differences."""
    out = {}
    for s, d in zip(rl_dca.SEEDS, diffs):
        b = {m: 0.5 for m in rl_dca.METRICS}
        b["per_article"] = {"rougeL": [0.5] * len(per_article), "attributed_fact_recall": [0.5] * len(per_article)}
        a = {m: 0.5 + d for m in rl_dca.METRICS}
        a["per_article"] = {k: [0.5 + x for x in per_article] for k in b["per_article"]}
        out[("a", s)], out[("b", s)] = a, b
    return out


@pytest.mark.parametrize("diffs, verdict", [
    ([0.10, 0.11, 0.12], "higher"),
    ([-0.10, -0.11, -0.12], "lower"),
    ([0.10, -0.05, 0.02], "not distinguishable at this size"),       # the sign changes with the seed
    ([0.0, 0.0, 0.0], "not distinguishable at this size"),
])
def test_paired_by_seed_says_only_what_two_standard_errors_allow(diffs, verdict):
    result = rl_dca.paired(rows(diffs, [0.0, 0.0]), "a", "b")
    assert result["rougeL"]["verdict"] == verdict
    assert result["rougeL"]["mean"] == pytest.approx(sum(diffs) / 3, abs=1e-4)


def test_paired_by_article_pools_every_seeds_articles():
    result = rl_dca.paired(rows([0.0, 0.0, 0.0], [0.03, -0.02, 0.02, -0.01]), "a", "b")
    by_article = result["rougeL_by_article"]
    assert by_article["n"] == 12
    assert by_article["mean"] == pytest.approx(0.005, abs=1e-4)
    assert by_article["verdict"] == "not distinguishable at this size"
    many = rl_dca.paired(rows([0.0, 0.0, 0.0], [0.05, 0.06] * 20), "a", "b")["attributed_fact_recall_by_article"]
    assert many["verdict"] == "higher"
