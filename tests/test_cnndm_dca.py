"""experiments/cnndm_dca.py: the late-words measure against cheaters, the verdict rule, the argument checks,
and a smoke run on a tiny slice of the real CNN/DailyMail lines (skipped where ../shared/data/cnndm is absent)."""
import json
from pathlib import Path

import pytest

from conftest import load_script  # noqa: E402  (tests/ is on sys.path under pytest)

cnndm_dca = load_script("cnndm_dca")
ROOT = Path(__file__).resolve().parents[1]
REAL = ROOT.parent / "shared" / "data" / "cnndm"      # as written: ../shared may be a folder or a link

pytestmark = pytest.mark.usefixtures("one_thread")

# -- late words -------------------------------------------------------------------------------------
# tokens 1-6 are the lead; "resigned", "friday" and "budget" come only later; "minister" both early and late
ARTICLE = ("the minister said taxes rise . "
           "-lrb- she resigned on friday over the budget , the minister said . -rrb-").split()
LEAD = ARTICLE[:6]


def shares(summary, reference=("minister", "resigned", "friday", "."), first=6):
    return cnndm_dca.late_word_shares(summary, ARTICLE, list(reference), first=first)


def test_a_summary_that_copies_the_first_sentence_has_no_late_word():
    assert shares(LEAD) == (0.0, None)
    assert cnndm_dca.late_words(LEAD, ARTICLE, first=6) == set()


def test_a_summary_made_of_late_words_scores_1():
    assert shares("she resigned friday over the budget .".split()) == (1.0, 2 / 3)    # budget: not in the reference


def test_the_reference_itself():
    ref = "the minister resigned on friday .".split()
    late, in_ref = shares(ref, ref)
    assert late == pytest.approx(2 / 3) and in_ref == 1.0            # minister is in the lead; all late words are in it


def test_stopwords_punctuation_and_brackets_are_not_content_words():
    assert cnndm_dca.content_words("the , of -lrb- 's n't '' resigned 42 <unk> .".split()) == {"resigned", "42"}
    assert shares("the , -lrb- resigned".split()) == (1.0, 1.0)


def test_a_word_stated_early_and_late_is_not_late_and_a_novel_word_counts_against():
    assert shares(["minister"]) == (0.0, None)
    assert shares(["resigned", "banana"]) == (0.5, 1.0)              # banana: not in the article at all
    assert shares([]) == (0.0, None)


def test_late_means_after_the_first_400_tokens_by_default():
    article = [f"w{i}" for i in range(400)] + ["late", "w3"]
    assert cnndm_dca.FIRST == 400
    assert cnndm_dca.late_word_shares(["late", "w3"], article, ["late"]) == (0.5, 1.0)


# -- the verdict rule ---------------------------------------------------------------------------------
def means(diffs):
    return {"a": {s: {m: 0.5 + d for m in cnndm_dca.METRICS} for s, d in enumerate(diffs)},
            "b": {s: {m: 0.5 for m in cnndm_dca.METRICS} for s in range(len(diffs))}}


@pytest.mark.parametrize("diffs, rouge, other", [
    ([0.10, 0.11, 0.12], "a beats b", "higher"),
    ([-0.10, -0.11, -0.12], "b beats a", "lower"),
    ([0.10, -0.05, 0.02], "not distinguishable", "not distinguishable"),     # the sign changes with the seed
    ([0.10], "not distinguishable", "not distinguishable"),                  # one seed: no standard error
])
def test_a_difference_counts_only_beyond_two_standard_errors(diffs, rouge, other):
    out = cnndm_dca.paired(means(diffs), "a", "b", list(range(len(diffs))))
    assert out["rouge2"]["verdict"] == rouge and out["late_words"]["verdict"] == other


# -- the arguments ------------------------------------------------------------------------------------
@pytest.fixture()
def tiny(tmp_path):
    """A line-file folder of 10 generated articles."""
    folder = tmp_path / "cnndm"
    folder.mkdir()
    (folder / "test.source").write_text("".join(f"article {i} says a thing . and more .\n" for i in range(10)))
    (folder / "test.target.sents.tsv").write_text("".join(f"a thing {i} .\n" for i in range(10)))
    return folder


@pytest.mark.parametrize("args, says", [
    (["run", "{missing}"], "no such folder"),
    (["run", "{empty}"], "no test.source"),
    (["run", "{tiny}", "--lines", "0", "5"], "'0' is not a whole number at least 1"),
    (["run", "{tiny}", "--lines", "8", "5"], "has 10 lines, not 13"),
    (["run", "{tiny}", "--lines", "8", "x"], "'x' is not a whole number"),
    (["run", "{tiny}", "--systems", "pg400", "dca9"], "--systems dca9: no such system"),
    (["run", "{tiny}", "--seeds", "1", "1"], "a seed given twice"),
    (["run", "{tiny}", "--seeds", "-1"], "'-1' is not a whole number"),
    (["run", "{tiny}", "--jobs", "0"], "'0' is not a whole number at least 1"),
    (["run", "{tiny}", "--lines", "5", "5", "--device", "nonsense"], "--device nonsense"),
    (["cost", "{tiny}", "--steps", "0"], "'0' is not a whole number at least 1"),
    (["report", "{tiny}", "--lines", "5", "5"], "writes its report only with --out DIR"),
    (["train", "{tiny}"], "invalid choice"),
])
def test_a_bad_argument_is_one_line_before_any_work(args, says, tiny, tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    names = {"missing": tmp_path / "nowhere", "empty": tmp_path / "empty", "tiny": tiny}
    runs = tmp_path / "runs"
    argv = [a.format(**names) for a in args] + (["--runs", str(runs)] if args[0] != "train" else [])
    with pytest.raises(SystemExit) as exit:
        cnndm_dca.main(argv)
    err = capsys.readouterr().err.strip().splitlines()
    assert exit.value.code == 2 and len(err) == 1 and err[0].startswith("dca-course: error: "), err
    assert says in err[0]
    assert not runs.exists()


def test_every_system_reads_the_same_vocabulary_sizes_epochs_and_beam():
    configs = {s: cnndm_dca.make_config(s, Path("runs/x")).to_dict() for s in cnndm_dca.TRAINED}
    for name in ("vocab_size", "beam_size", "emb_size", "hidden_size", "max_tgt", "bucket", "profile"):
        assert len({c[name] for c in configs.values()}) == 1, name
    assert configs["pg400"]["max_src"] == 400 and configs["pg800"]["max_src"] == configs["dca3"]["max_src"] == 800
    assert configs["pg400"]["epochs"] + configs["pg400"]["coverage_epochs"] == configs["dca3"]["epochs"] == 3
    assert configs["dca3"]["context_layers"] == 2 and configs["dca3-nomsg"]["context_layers"] == 0
    rl, control = configs["dca3-rl"], configs["dca3-mle-control"]
    assert control["gamma"] == 0 and rl["gamma"] > 0 and {**rl, "gamma": 0} == control   # they differ in gamma only


# -- a smoke run on real lines ------------------------------------------------------------------------
@pytest.mark.skipif(not (REAL / "test.source").is_file(), reason="no ../shared/data/cnndm here")
def test_a_tiny_table_trains_is_kept_and_reports(tmp_path, capsys):
    runs, out = tmp_path / "runs", tmp_path / "results"
    try_ = ["--lines", "16", "4", "--seeds", "0", "--runs", str(runs)]
    systems = ["--systems", "lead3", "pg400", "dca3-mle-control"]
    assert cnndm_dca.main(["run", str(REAL), *systems, *try_]) == 0
    kept = {s: (runs / s / "seed0" / "result.json") for s in ("pg400", "dca3", "dca3-mle-control")}   # dca3: the start
    stamps = {s: f.stat().st_mtime_ns for s, f in kept.items()}
    assert cnndm_dca.main(["run", str(REAL), *systems, *try_]) == 0            # kept: nothing trains again
    assert stamps == {s: f.stat().st_mtime_ns for s, f in kept.items()}
    assert cnndm_dca.main(["report", str(REAL), *try_, "--out", str(out)]) == 0
    data = json.loads((out / "cnndm_dca.json").read_text())
    md = (out / "cnndm_dca.md").read_text()
    assert "not comparable with the papers (10,000 articles, minutes of training)" in md
    assert '"A beats B"' in md and '"not distinguishable"' in md
    assert data["data"] == "../shared/data/cnndm" and "/work" not in data["provenance"]["command"]
    assert set(data["table"]) == {"lead3", "pg400", "dca3", "dca3-mle-control"}
    assert "pg800/seed0" in data["missing_runs"] and "dca3 minus pg400" in data["paired_with_pg400"]
    # the per-article ROUGE averages to the recipe's own figure
    stored = json.loads(kept["pg400"].read_text())["result"]["scores"]
    assert data["table"]["pg400"]["rouge1"]["mean"] == pytest.approx(stored["rouge1"], abs=1e-3)
    scores = json.loads((runs / "pg400" / "seed0" / "scores.json").read_text())["per_article"]
    assert len(scores["late_words"]) == 4 and data["table"]["lead3"]["late_words"]["mean"] == 0.0
    # decoded again without repeated trigrams, once: every trained system's summaries hold none
    blocked = {s: runs / s / "seed0" / "summaries-block3.txt" for s in kept}
    assert all(len(f.read_text().splitlines()) == 4 for f in blocked.values())
    assert {s: data["block3"]["table"][s]["repeated_trigrams"]["mean"] for s in kept} == dict.fromkeys(kept, 0.0)
    assert data["block3"]["table"]["lead3"] == data["table"]["lead3"]
    assert "## The same runs, decoded again" in md and "dca3 minus pg400" in data["block3"]["paired_with_pg400"]
    assert data["cost"]["per_system"]["pg400"]["runs"] == 1 and data["cost"]["one_thread_seconds"] > 0
    assert "## What it cost" in md
    stamps = {s: f.stat().st_mtime_ns for s, f in blocked.items()}
    assert cnndm_dca.main(["report", str(REAL), *try_, "--out", str(out)]) == 0
    assert stamps == {s: f.stat().st_mtime_ns for s, f in blocked.items()}
    # the run's weights, read back and decoded as the run decoded them, give the run's own summaries
    run = runs / "dca3" / "seed0"
    own = (run / "summaries.txt").read_text()
    cnndm_dca.decode_again(str(run), str(REAL), [16, 4], "beam", data["code"])
    assert (run / "summaries.txt").read_text() == own
    assert cnndm_dca.main(["cost", str(REAL), "--systems", "pg400", "--steps", "1", "--decode-articles", "2",
                           *try_]) == 0
    assert "one run" in capsys.readouterr().err
    assert set(json.loads((runs / "cost.json").read_text())["systems"]) == {"pg400"}
    # a run stopped after its last epoch, before it decoded: it goes on from its last.pt, and its cost says so
    assert json.loads(kept["pg400"].read_text())["result"]["resumed_after_epoch"] is None
    kept["pg400"].unlink()
    assert cnndm_dca.main(["run", str(REAL), "--systems", "pg400", *try_]) == 0
    assert json.loads(kept["pg400"].read_text())["result"]["resumed_after_epoch"] == 3
    assert cnndm_dca.main(["report", str(REAL), *try_, "--out", str(out)]) == 0
    cost = json.loads((out / "cnndm_dca.json").read_text())["cost"]
    assert "resumed after epoch 3" in cost["interrupted"]["pg400/seed0"] and "dca3/seed0" not in cost["interrupted"]


# -- runs of another commit count only when their training is shown to be the same ---------------------
def test_a_run_of_another_commit_counts_only_when_listed(tmp_path):
    settings = {"system": "pg400", "seed": 0}
    code = cnndm_dca.code_fingerprint(cnndm_dca.TRAINING_PATHS)
    listed = next(iter(cnndm_dca.SAME_TRAINING))
    run = tmp_path / "pg400" / "seed0"
    run.mkdir(parents=True)
    (run / "summaries.txt").write_text("a summary\n")
    for stored, counts in ((code, True), (listed, True), ("0123456789abcdef", False)):
        (run / "result.json").write_text(json.dumps({"settings": settings, "code": stored, "init_weights": None,
                                                     "result": {}}))
        assert (cnndm_dca.kept(run, settings, code) is not None) is counts, stored
        assert cnndm_dca.kept(run, {**settings, "seed": 1}, code) is None          # other settings never count


@pytest.mark.skipif(not (REAL / "test.source").is_file(), reason="no ../shared/data/cnndm here")
def test_same_training_as_the_kept_runs(tmp_path):
    """SAME_TRAINING's check, trained again: the quick run of pg400 and dca3 under this code gives the
    weights and summaries e747435 gave (where the kernels are those that ran it)."""
    import torch

    check = cnndm_dca.SAME_TRAINING_CHECK
    if (torch.__version__, torch.backends.cpu.get_cpu_capability()) != (check["torch"], check["cpu_capability"]):
        pytest.skip(f"the check ran on PyTorch {check['torch']} with {check['cpu_capability']} kernels")
    runs = tmp_path / "runs"
    assert cnndm_dca.main(["run", str(REAL), "--lines", *map(str, check["lines"]), "--seeds", "0",
                           "--systems", "pg400", "dca3", "--runs", str(runs)]) == 0
    for system in ("pg400", "dca3"):
        run = runs / system / "seed0"
        state = torch.load(run / "last.pt", map_location="cpu", weights_only=True)["model"]
        assert (cnndm_dca.state_sha(state), cnndm_dca.file_sha(run / "summaries.txt")) == check[system], system
