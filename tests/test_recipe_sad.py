"""Smoke run of egs/fearless_steps/sad1 on a tiny mini corpus, then decoding an unseen data dir."""
import json
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
import soundfile
import yaml
from recipe_runner import nonspeech_sources_missing
from recipe_runner import headline_of_run, run_recipe as run

from local_models.common.results import git_commit
from local_models.common.sealed import clean_commit

from local_models.sad.decisions import load_durations
from local_models.sad.labels import load_reference, read_rttm
from local_models.sad.metrics import dcf_of_counts, score

ROOT = Path(__file__).resolve().parents[1]
RECIPE = ROOT / "egs" / "fearless_steps" / "sad1"
pytestmark = pytest.mark.skipif(not (ROOT / "tools" / "venv" / "bin" / "python").exists(),
                                reason="needs tools/venv (make install)")


@pytest.fixture(scope="module")
def recipe(tmp_path_factory):
    why = nonspeech_sources_missing()  # stage 1 builds the non-speech set from Debian sound packages
    if why:
        pytest.skip(f"{why} (tools/install.sh installs the packages as root)")
    dst = tmp_path_factory.mktemp("sad") / "sad1"
    shutil.copytree(RECIPE, dst, ignore=shutil.ignore_patterns("data", "dump", "exp", "downloads", "RESULTS.md"))
    run(dst, "--nj", "1", "--train-min", "1", "--dev-min", "1", "--eval-min", "1", "--eval-ood-min", "1", "--train-config-suffix",
        "_smoke", "--seg-grid", "5:1 9:3", "--data-args", "--nonspeech-scale 0.2")
    return dst


def test_full_run_writes_results(recipe):
    results = json.loads((recipe / "exp" / "results.json").read_text())
    assert results["corpus"] == "mini" and results["recipe"] == "fearless_steps/sad1"
    for system in ("energy", "webrtcvad", "silero_vad", "stat_sad",
                   "cnn_hmm", "cnn_median", "rnn_hmm", "rnn_median", "seg_rnn", "majority_vote"):
        m = results["systems"][system]
        audio_s = 0.0
        for subset in ("dev", "eval", "eval_ood"):
            r = m[subset]
            # every stored number comes from the system's hyp.rttm of that set: rescored here against the reference
            # (pooled and per file, with and without collar), and the chunk rows the intervals resample add up to it
            dec = recipe / "exp" / system / f"decode_{subset}"
            ref, hyp, durs = load_reference(recipe / "data" / subset), read_rttm(dec / "hyp.rttm"), load_durations(dec)
            collar, no_collar = score(ref, hyp, durs, 0.5), score(ref, hyp, durs, 0.0)
            for key in ("dcf", "f1", "precision", "recall", "p_miss", "p_fa"):
                assert r[key] == pytest.approx(collar["pooled"][key]), (system, subset, key)
            assert r["dcf_no_collar"] == pytest.approx(no_collar["pooled"]["dcf"])
            assert r["dcf_files"] == [[rec, pytest.approx(x["dcf"])] for rec, x in sorted(collar["files"].items())]
            assert r["dcf_per_file"] == pytest.approx(collar["per_file"]["dcf"])
            assert r["dcf_per_file_no_collar"] == pytest.approx(no_collar["per_file"]["dcf"])
            assert sorted({c[0] for c in r["chunks"]}) == sorted(durs)
            assert 100 * dcf_of_counts([c[3] for c in r["chunks"]]) == pytest.approx(100 * r["dcf"], abs=0.01)
            assert 100 * dcf_of_counts([c[4] for c in r["chunks"]]) == pytest.approx(100 * r["dcf_no_collar"], abs=0.01)
            assert "background" in r["robustness"]["fa"] and r["robustness"]["miss_by_snr"]
            audio_s += sum(durs.values())
        # the RTF is the decodes' processing time over the sets' audio, one thread at a time
        rtfs = [json.loads((recipe / "exp" / system / f"decode_{x}" / "rtf.json").read_text())
                for x in ("dev", "eval", "eval_ood")]
        assert sum(x["audio_s"] for x in rtfs) == pytest.approx(audio_s, abs=0.05)
        assert m["rtf"] == pytest.approx(sum(x["proc_s"] for x in rtfs) / sum(x["audio_s"] for x in rtfs))
        # a minute per set: not every kind of event occurs in every set (music: in train, test_stage1_...)
        assert {k for x in ("dev", "eval", "eval_ood") for k in m[x]["robustness"]["fa"]} >= {"tone", "noise"}
        assert m["threads"] == 1 and m["cores"] == os.cpu_count()
        # graded scores get the threshold-free table, decisions (statistical SAD, the vote) and duplicates do not
        assert ("separability" in m["eval_ood"]) == (system in ("energy", "webrtcvad", "silero_vad", "cnn_hmm",
                                                                "rnn_hmm", "seg_rnn"))
    md = (recipe / "RESULTS.md").read_text()
    busiest = max(m["load_average_at_start"] for m in results["systems"].values() if "rtf" in m)
    assert "the busiest start was " in md and f"The 1-minute load average when it started was {busiest:.2f}" in md
    assert "Separability on eval_ood (threshold-free)" in md and "| RNN posterior (RNN + HMM, RNN + median) | " in md
    # the headline's verdicts stand on intervals: a smoke-size set (one recording of a minute) has too few units to
    # resample, and its lines say so instead of judging the points
    claims = headline_of_run(recipe)
    ordering = [c for c in claims if c.startswith("Paper's ordering on eval DCF")]
    n_rec = len(results["systems"]["seg_rnn"]["eval"]["dcf_files"])
    n_chunks = len(results["systems"]["seg_rnn"]["eval"]["chunks"])
    assert len(ordering) == 2 and n_chunks < 5
    assert all(f": no verdict, an interval cannot be computed ({n_rec} recording" in c and f"{n_chunks} chunk" in c
               and "**" not in c for c in ordering)
    # every sealed set scored once under this configuration, said before the tables; the nets' training commits
    head = md.split("## Table 2")[0]
    assert results["sealed_looks"]["looks"] == {"eval": 1, "eval_ood": 1}
    assert "Sealed sets scored under this configuration: eval 1 time, eval_ood 1 time." in head
    trained = results["environment"]["trained"]
    assert set(trained) == {"cnn_hmm", "cnn_median", "rnn_hmm", "rnn_median", "seg_rnn"} | (
        {"seg_rnn_devbest"} if "seg_rnn_devbest" in results["systems"] else set())
    assert all(v.startswith("commit ") for v in trained.values()) and "- trained: `cnn_hmm`" in head
    assert "| Stat. SAD | " in md and "| Seg. RNN | " in md and "not run here" not in md and "Collar 0.5 s" in md
    for model in ("cnn1d", "rnn", "seg_rnn"):
        assert (recipe / "exp" / model / "valid.loss.best.pth").exists()
        assert "sad_train" in (recipe / "exp" / model / "run.sh").read_text()
    assert (recipe / "dump" / "train_aug" / "chunks" / "feats_shape").is_file()  # trained on train + its copies
    n = len((recipe / "dump" / "train_aug" / "chunks" / "feats_shape").read_text().splitlines())
    record = f"train_aug: {n} chunks (train + 1 augmented copy per recording)"
    assert (recipe / "exp" / "cnn1d" / "train_data.txt").read_text().strip() == record
    assert f"| cnn1d | `conf/tuning/train_cnn1d_smoke.yaml` | {record} | " in md
    assert (recipe / "exp" / "images" / "dcf_vs_threshold.png").stat().st_size > 10000
    # the report's figure beside it (tracked), not in the gitignored exp/
    assert "![DCF vs threshold](images/RESULTS/dcf_vs_threshold.png)" in md and "](exp/images/" not in md
    assert ((recipe / "images" / "RESULTS" / "dcf_vs_threshold.png").read_bytes()
            == (recipe / "exp" / "images" / "dcf_vs_threshold.png").read_bytes())
    assert (recipe / "dump" / "train_aug" / "feats.scp").is_file()
    assert "## Robustness on eval_ood" in md and "Goal on eval_ood (held-out make)" in md
    # stage 6's FA-bounded points reach the decodes, results.json and the report (None where stage 6 found none)
    # (this smoke-size dev has tones but no music: the bound is checked on its tones alone, and the sweep says so)
    bounded = {s for s in results["systems"] if (recipe / "exp" / s / "threshold_fa10").is_file()}
    for s, m in results["systems"].items():
        sweep = json.loads((recipe / "exp" / s / "threshold.sweep.json").read_text())
        assert sweep["fa_bound"]["kinds"] == ["tone"] and sweep["fa_bound"]["not_measured"] == ["music"]
        assert (sweep["fa_bound"]["threshold"] is None) == (
            s not in bounded) and "tone" in sweep["rows"][0]["fa"]
        assert (m["dev"]["fa_bounded"] is not None) == (s in bounded)
        assert (m["threshold_fa_bounded"] is not None) == (s in bounded)
        assert (recipe / "exp" / s / "decode_eval_ood" / "hyp_fa10.rttm").is_file() == (s in bounded)
    assert ("## FA-bounded operating point" in md) == bool(bounded)
    paper_systems = bounded - {"energy", "webrtcvad", "silero_vad"}
    assert ("at the FA-bounded thresholds (chosen on dev" in md) == bool(paper_systems)
    for subset in ("dev", "eval"):
        segs = (recipe / "exp" / "stat_sad" / f"decode_{subset}" / "segments").read_text().splitlines()
        assert segs and all(float(l.split()[3]) > float(l.split()[2]) for l in segs)
    assert "sad_decode --system stat_sad" in (recipe / "exp" / "stat_sad" / "decode_eval" / "run.sh").read_text()


def test_stage1_events_augmentation_and_the_held_out_make(recipe):
    """Stage 1: the mini corpus carries non-speech events from the built-in set's train make; train_aug = train plus one
    labelled copy per recording; eval_ood's voices and non-speech sources are of another make."""
    from local_models.common.datadir import read_table
    from local_models.sad.events import load_events
    from local_models.sad.labels import load_reference

    data = recipe / "data"
    kinds = {e.kind for evs in load_events(data / "train").values() for e in evs}
    assert {"music", "tone", "speech"} <= kinds
    train, aug = read_table(data / "train" / "wav.scp"), read_table(data / "train_aug" / "wav.scp")
    assert set(train) < set(aug) and len(aug) == 2 * len(train)
    ref = load_reference(data / "train_aug")
    assert all(ref[f"{r}-{t}"] == ref[r] for r in train for t in ("music", "noise", "babble", "tones", "reverb")
               if f"{r}-{t}" in aug)
    sources = {}
    for make in ("train", "eval"):
        rows = (recipe / "downloads" / "nonspeech" / make / "sources.tsv").read_text().splitlines()[1:]
        sources[make] = {r.split("\t")[2] for r in rows}
    assert sources["train"] and sources["eval"] and not sources["train"] & sources["eval"]
    ood = {e.kind for evs in load_events(data / "eval_ood").values() for e in evs}
    assert "speech" in ood and ood & {"music", "tone", "noise", "babble"}


def test_majority_vote_is_two_of_three_over_the_table2_seg_rnn(recipe):
    """Stage 6/7: the vote is decoded after the grid, over the seg RNN that Table 2 reports, and not tuned."""
    exp = recipe / "exp"
    seg = "seg_rnn_devbest" if (exp / "seg_rnn_devbest" / "model_dir").is_file() else "seg_rnn"
    used = (exp / "majority_vote" / "decode_eval" / "member_thresholds").read_text().split()
    assert seg in used and float((exp / "majority_vote" / "threshold").read_text()) == 1.5
    ths = [float((exp / m / "threshold").read_text()) for m in ("cnn_hmm", "rnn_hmm", seg)]
    assert [float(x) for x in used[:3]] == ths
    card = yaml.safe_load((exp / "majority_vote" / "packed" / "decision.yaml").read_text())
    assert [m["system"] for m in card["members"]] == ["cnn_hmm", "rnn_hmm", seg] and card["threshold"] == 1.5


def test_segment_rnn_grid(recipe):
    """Stage 7 (paper Fig. 7): the Table 2 seg_rnn is reused for its own (L, S); other points are trained."""
    grid = json.loads((recipe / "exp" / "seg_grid" / "grid.json").read_text())
    assert [(g["L"], g["S"]) for g in grid["points"]] == [(5, 1), (9, 3)]
    assert grid["points"][0]["model_dir"] == "exp/seg_rnn"
    conf = (recipe / "exp" / "seg_grid" / "L9_S3" / "config.yaml").read_text()
    assert "seg_len: 9" in conf and "seg_shift: 3" in conf
    # each point's DCF is the best of its own dev threshold sweep, at the threshold it names
    for g in grid["points"]:
        rows = json.loads((recipe / g["model_dir"] / "threshold.sweep.json").read_text())["rows"]
        best = min(rows, key=lambda r: (r["dcf"], r["threshold"]))  # ties: the lowest threshold, as tuned
        assert g["dcf"] == pytest.approx(best["dcf"]) and g["threshold"] == pytest.approx(best["threshold"])
    assert grid["reference"]["label"] == "CNN + HMM"
    assert (recipe / "exp" / "images" / "seg_rnn_grid.png").stat().st_size > 5000
    md = (recipe / "RESULTS.md").read_text()
    assert "## Fig. 7 shape" in md and "| 90 | 30 |" in md


def test_table2_seg_rnn_is_the_dev_best_grid_point(recipe):
    """The paper chose (L, S) on dev: a dev-best point other than exp/seg_rnn is decoded as seg_rnn_devbest."""
    grid = json.loads((recipe / "exp" / "seg_grid" / "grid.json").read_text())
    best = grid["best"]
    assert best["dcf"] == min(g["dcf"] for g in grid["points"])
    results = json.loads((recipe / "exp" / "results.json").read_text())["systems"]
    md = (recipe / "RESULTS.md").read_text()
    if best["model_dir"] == "exp/seg_rnn":
        assert "seg_rnn_devbest" not in results and not (recipe / "exp" / "seg_rnn_devbest").exists()
    else:
        m = results["seg_rnn_devbest"]
        # same model, same dev data, same threshold sweep: the same DCF as the grid point
        assert abs(m["dev"]["dcf"] - best["dcf"]) < 1e-9 and "eval" in m
        assert (recipe / "exp" / "seg_rnn_devbest" / "model_dir").read_text().strip() == best["model_dir"]
        assert "| Seg. RNN, dev-best (L, S) of Fig. 7 |" in md
    # the ordering lines quote this run's eval DCFs of the seg RNN Table 2 reports
    seg = "seg_rnn_devbest" if "seg_rnn_devbest" in results else "seg_rnn"
    label = "Seg. RNN, dev-best (L, S) of Fig. 7" if seg == "seg_rnn_devbest" else "Seg. RNN"
    lines = [x for x in md.splitlines() if x.startswith("Paper's ordering on eval")]
    assert len(lines) == 2
    assert f"({label} {100 * results[seg]['eval']['dcf']:.2f}, " in lines[0]
    assert f"({label} {100 * results[seg]['eval']['dcf_no_collar']:.2f}, " in lines[1]


def test_paper_ordering_rule():
    from local_models.sad.report import paper_ordering

    def sys_(**dcf):
        return {n: {"eval": {"dcf": v}} for n, v in dcf.items()}

    base = dict(seg_rnn=0.02, cnn_hmm=0.03, rnn_hmm=0.04, stat_sad=0.05, energy=0.2)
    assert paper_ordering(sys_(**base), "eval")[1]
    assert not paper_ordering(sys_(**{**base, "seg_rnn": 0.035}), "eval")[1]
    # the dev-best seg RNN, when present, is the one the claim is about
    assert paper_ordering(sys_(**{**base, "seg_rnn": 0.035, "seg_rnn_devbest": 0.01}), "eval")[1]
    assert not paper_ordering(sys_(**{**base, "stat_sad": 0.3}), "eval")[1]
    assert paper_ordering(sys_(seg_rnn=0.1), "eval") is None


def test_ordering_is_checked_with_and_without_the_collar_and_files_are_tabulated():
    from local_models.sad.report import ordering_lines, per_file_lines

    def sys_(collar, no_collar):
        return {n: {"eval": {"dcf": c, "dcf_no_collar": nc, "dcf_files": {"f1": c, "f2": nc}}}
                for n, c, nc in zip(("seg_rnn", "cnn_hmm", "rnn_hmm", "stat_sad", "energy"), collar, no_collar)}

    # with the collar the points are in the paper's order; without it the seg RNN loses to the RNN + HMM; with no
    # chunk rows to resample (tests/test_sad_claims.py judges those) neither is a verdict
    lines = [x for x in ordering_lines(sys_((0.02, 0.03, 0.04, 0.05, 0.2), (0.06, 0.07, 0.05, 0.08, 0.3)), "eval") if x]
    assert len(lines) == 2 and "collar 0.5 s" in lines[0] and "the points are in the paper's order" in lines[0]
    assert "without collar" in lines[1] and "the points are not in the paper's order" in lines[1]
    assert "Seg. RNN 6.00" in lines[1] and all(": no verdict, " in x and "**" not in x for x in lines)
    table = per_file_lines(sys_((0.02, 0.03, 0.04, 0.05, 0.2), (0.06, 0.07, 0.05, 0.08, 0.3)), ["eval"])
    assert "| file | Stat. SAD | CNN + HMM | RNN + HMM | Seg. RNN |" in table[3]
    assert table[5] == "| f1 | 5.00 | 3.00 | 4.00 | 2.00 | 20.00 |" and table[6].startswith("| f2 | 8.00 |")


def test_stage6_without_the_grid_resegments_an_earlier_dev_best_point(recipe, tmp_path):
    """Stage 8 scores exp/seg_rnn_devbest whenever it is there: a rerun of stage 6 with --seg-grid "" must re-tune and
    re-segment it, as stage 7 would, so that no decision of an earlier stage 6 is scored."""
    work = tmp_path / "sad1"
    shutil.copytree(recipe, work, ignore=shutil.ignore_patterns("dump", "downloads"))
    best = work / "exp" / "seg_rnn_devbest"
    if not (best / "model_dir").is_file():  # this grid kept exp/seg_rnn: its decodes stand in for a dev-best point
        for d in (work / "exp" / "seg_rnn").glob("decode_*"):
            shutil.copytree(d, best / d.name)
        (best / "model_dir").write_text("exp/seg_rnn\n")
    for f in [*best.glob("decode_*/hyp.rttm"), best / "threshold.sweep.json"]:
        f.unlink(missing_ok=True)
    (best / "threshold").write_text("0.999\n")  # an earlier stage 6's
    run(work, "--stage", "6", "--stop-stage", "6", "--systems", "seg_rnn", "--train-config-suffix", "_smoke",
        "--seg-grid", "")
    rows = json.loads((best / "threshold.sweep.json").read_text())["rows"]
    assert float((best / "threshold").read_text()) == min(rows, key=lambda r: (r["dcf"], r["threshold"]))["threshold"]
    assert all((best / f"decode_{x}" / "hyp.rttm").is_file() for x in ("dev", "eval", "eval_ood"))


def test_malformed_grid_fails_before_any_work(recipe):
    proc = subprocess.run(["bash", "run.sh", "--seg-grid", "3:5"], cwd=recipe, capture_output=True, text=True,
                          env={**os.environ, "MAIN_ROOT": str(ROOT)})
    assert proc.returncode != 0 and "'3:5' is not L:S" in proc.stderr and "Stage 1" not in proc.stderr


def without_looks(recipe):
    """results.json and RESULTS.md less what a rescoring must change: the sealed sets' look and rescoring counts
    (and the date)."""
    results = json.loads((recipe / "exp" / "results.json").read_text())
    record = results.pop("sealed_looks")
    looks = (record["looks"], record.get("rescored", {}))
    results["environment"].pop("date")
    md = [x for x in (recipe / "RESULTS.md").read_text().splitlines()
          if not x.startswith(("Sealed sets scored under", "- date: "))]
    return results, md, looks


def test_rescoring_is_idempotent_and_no_new_look_at_the_sealed_sets(recipe):
    files = ("exp/stat_sad/decode_eval/hyp.rttm", "exp/seg_grid/grid.json", "exp/rnn_hmm/threshold.sweep.json")
    before = {p: (recipe / p).read_bytes() for p in files}
    results, md, looks = without_looks(recipe)
    run(recipe, "--stage", "6", "--stop-stage", "8", "--train-config-suffix", "_smoke", "--seg-grid", "5:1 9:3")
    assert before == {p: (recipe / p).read_bytes() for p in before}
    again, md_again, looks_again = without_looks(recipe)
    # the commit that scored is recorded, not computed: a commit made while this module ran is the one change allowed
    was, now = results["commit"], again["commit"]
    results["commit"] = results["environment"]["commit"] = now
    assert results == again and [x.replace(f"Commit {was},", f"Commit {now},") for x in md] == md_again
    # the same decodes scored again by the same clean commit: a rescoring, not another look (a changed decode would
    # be one: test_sealed.py); from a modified checkout the code may differ: a look
    if clean_commit(git_commit()):
        assert looks_again == (looks[0], {x: looks[1].get(x, 0) + 1 for x in looks[0]})
        assert "Rescored from the same outputs" in (recipe / "RESULTS.md").read_text()
    else:
        assert looks_again[0] == {x: n + 1 for x, n in looks[0].items()}


TUNED = ("threshold", "threshold_fa10", "threshold.sweep.json")


def tuned_choices(work):
    """Every choice stages 6-7 make: each system's thresholds and sweeps, the grid and its dev-best pick."""
    exp = work / "exp"
    files = [p for name in TUNED for pattern in ("*", "seg_grid/*") for p in exp.glob(f"{pattern}/{name}")]
    files += [exp / "seg_grid" / "grid.json", exp / "seg_rnn_devbest" / "model_dir"]
    return {str(p.relative_to(work)): p.read_bytes() for p in files if p.is_file()}


def test_tuning_reads_no_sealed_set(recipe, tmp_path):
    """Stages 6 and 7 choose on dev alone: with every trace of the sealed sets (data, features, decodes) moved aside,
    they make the same choices, byte for byte; and a sealed set named as --dev-set stops them before any work."""
    work = tmp_path / "sad1"
    shutil.copytree(recipe, work, ignore=shutil.ignore_patterns("downloads"))
    before = tuned_choices(work)
    assert {"exp/rnn_hmm/threshold", "exp/seg_grid/grid.json", "exp/stat_sad/threshold.sweep.json"} <= set(before)
    aside = tmp_path / "aside"
    sealed = [*work.glob("data/eval*"), *work.glob("dump/eval*"), *work.glob("exp/*/decode_eval*"),
              *work.glob("exp/seg_grid/*/decode_eval*")]
    assert {p.name for p in sealed} >= {"eval", "eval_ood", "decode_eval", "decode_eval_ood"}
    for p in sealed:
        dst = aside / p.relative_to(work)
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(p), str(dst))
    for name in TUNED:  # the choices are made again, not left from the first run
        for p in [*work.glob(f"exp/*/{name}"), *work.glob(f"exp/seg_grid/*/{name}")]:
            p.unlink()
    run(work, "--stage", "6", "--stop-stage", "7", "--test-sets", "dev", "--train-config-suffix", "_smoke",
        "--seg-grid", "5:1 9:3")
    assert tuned_choices(work) == before
    for dev in ("eval", "eval_ood"):
        proc = run(work, "--stage", "6", "--stop-stage", "6", "--dev-set", dev, check=False)
        err = [x for x in proc.stderr.splitlines() if x.startswith("error: ")]
        assert proc.returncode != 0 and err == [f"error: stage 6 (they choose on --dev-set): {dev} is a sealed set "
                                                "(sealed: eval eval_ood): choices are made on dev, sealed sets are "
                                                "only scored"]
        assert "Stage 6" not in proc.stderr


def test_decode_unseen_data_dir_without_reference(recipe):
    """A 16 kHz recording with only wav.scp: decoded (resampled to 8 kHz), segments + RTTM written."""
    wave, sr = soundfile.read(recipe / "downloads" / "mini" / "wav" / "eval_000.wav")
    up = np.repeat(wave, 2)  # crude 16 kHz version: the decode stage resamples it
    path = recipe / "new.wav"
    soundfile.write(path, up, 16000)
    (recipe / "data" / "new").mkdir()
    (recipe / "data" / "new" / "wav.scp").write_text(f"other-rec {path}\n")
    (recipe / "data" / "new" / "utt2spk").write_text("other-rec other-rec\n")
    (recipe / "data" / "new" / "spk2utt").write_text("other-rec other-rec\n")
    run(recipe, "--stage", "5", "--stop-stage", "6", "--test-sets", "new", "--systems", "energy stat_sad")
    for system in ("energy", "stat_sad"):
        d = recipe / "exp" / system / "decode_new"
        assert (d / "hyp.rttm").read_text().startswith("SPEAKER other-rec 1 ")
        assert (d / "segments").read_text().startswith("other-rec-")


PACKED = ("stat_sad", "cnn_hmm", "cnn_median", "rnn_hmm", "rnn_median", "seg_rnn", "majority_vote")


def test_pack_stage_archives_and_cards(recipe):
    """Stage 9: one archive per system a user can run, its card holding the recipe's numbers and threshold."""
    from local_models.common.pack import read_card

    results = json.loads((recipe / "exp" / "results.json").read_text())["systems"]
    packed = PACKED + (("seg_rnn_devbest",) if (recipe / "exp" / "seg_rnn_devbest" / "model_dir").is_file() else ())
    for system in packed:
        card = read_card(recipe / "exp" / system / "packed" / "model.tar.gz")
        assert card["system"] == system and card["sample_rate"] == 8000 and card["frame_rate"] == 100
        for subset in ("dev", "eval"):
            assert card["metrics"][subset]["dcf"] == results[system][subset]["dcf"]
            assert card["metrics"][subset]["f1"] == results[system][subset]["f1"]
        assert card["threshold"] == float((recipe / "exp" / system / "threshold").read_text())
        assert card["threshold_tuned_on_dev"] and card["corpus"] == "mini"
        if system != "stat_sad":
            assert all(t["train_set"] == "train_aug" and t["train_recordings"] >= 2 and t["epochs"] == 1
                       for t in card["training"].values())
        assert "pack_model --paper sad" in (recipe / "exp" / system / "packed" / "run.sh").read_text()
    for system in ("energy", "webrtcvad", "silero_vad"):  # reference detectors: not packed
        assert not (recipe / "exp" / system / "packed").exists()


def segments_cli(model, wav, out, cwd):
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    env.update(PYTHONPATH=str(ROOT), SPEECH_RECIPES_CACHE=str(cwd / "cache"))
    proc = subprocess.run([str(ROOT / "tools" / "venv" / "bin" / "python"), "-m", "local_models.bin.speech_segments",
                           "--model", str(model), "--rttm", str(out), str(wav)], cwd=cwd, env=env,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    from local_models.sad.labels import read_rttm

    return read_rttm(out).get(Path(wav).stem, [])


def test_packed_systems_run_alone(recipe, tmp_path, monkeypatch):
    """Archives copied out of the recipe run through the speech-segments command alone: the packed seg_rnn
    reproduces the recipe's own eval segments; the packed stat_sad finds the speech of a stream no stage saw."""
    import importlib.util

    from local_models.sad.labels import read_segments_by_rec, to_mask

    away = tmp_path / "user"
    away.mkdir()
    for system in ("seg_rnn", "stat_sad"):
        shutil.copy(recipe / "exp" / system / "packed" / "model.tar.gz", away / f"{system}.tar.gz")
    wav = recipe / "downloads" / "mini" / "wav" / "eval_000.wav"
    got = segments_cli(away / "seg_rnn.tar.gz", wav, away / "eval.rttm", away)
    want = read_segments_by_rec(recipe / "exp" / "seg_rnn" / "decode_eval" / "segments")["eval_000"]
    # the recipe's segments, less the frames of digital silence (the stream's dropouts), which the packed
    # SpeechSegmenter never calls speech (its docstring) and the recipe's stage 6 does not look at
    from local_models.sad.streaming import silent_frames

    x, _ = soundfile.read(wav)
    n = int(np.ceil(len(x) / 80))
    want_mask = to_mask(want, n, 0.01) & ~silent_frames(x, n)
    np.testing.assert_array_equal(to_mask(got, n, 0.01), want_mask)
    # and frame by frame: the packed net gives the posteriors stage 5 wrote (a smoke net's segments may be trivial)
    from local_models.sad.decisions import load_scores
    from local_models.sad.inference import SpeechSegmenter

    monkeypatch.setenv("SPEECH_RECIPES_CACHE", str(away / "cache"))
    scores = SpeechSegmenter.from_pretrained(away / "seg_rnn.tar.gz").frame_scores(wav)
    np.testing.assert_allclose(scores, load_scores(recipe / "exp" / "seg_rnn" / "decode_eval")["eval_000"], atol=1e-5)

    spec = importlib.util.spec_from_file_location("make_mini_corpus", RECIPE / "local" / "make_mini_corpus.py")
    mini = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mini)
    wave, truth, _ = mini.build_stream(np.random.default_rng(777), mini.split_voices(0)["eval"], 40.0)
    fresh = away / "fresh.wav"
    soundfile.write(fresh, np.repeat(wave, 2), 16000)  # 16 kHz: resampled by the command
    segs = segments_cli(away / "stat_sad.tar.gz", fresh, away / "fresh.rttm", away)
    n = 4000
    hyp, ref = to_mask(segs, n, 0.01), to_mask(truth, n, 0.01)
    assert segs and all(0 <= a < b <= 40.0 for a, b in segs)
    # most speech found, and far more often inside speech than outside it (the stream's beeps, static and clicks
    # make stat_sad's false alarms; "all speech" or "none" would give a difference of 0)
    recall, false_alarm = hyp[ref].mean(), hyp[~ref].mean()
    assert recall > 0.6 and recall - false_alarm > 0.3, (recall, false_alarm)


def test_bad_aug_copies_fails_before_any_work(tmp_path):
    dst = tmp_path / "sad1"
    shutil.copytree(RECIPE, dst, ignore=shutil.ignore_patterns("data", "dump", "exp", "downloads", "RESULTS.md"))
    proc = run(dst, "--aug-copies", "one", check=False)
    assert proc.returncode != 0 and "--aug-copies 'one' is not a number" in proc.stderr and "Stage 1" not in proc.stderr
