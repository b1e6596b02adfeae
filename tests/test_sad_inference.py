"""Packed SAD systems and SpeechSegmenter (local_models/sad/{pack,inference,streaming}.py), the speech-segments command:
tiny nets in a fake recipe, packed, loaded elsewhere, run whole-file and chunk by chunk on generated audio; the
online Viterbi / median / window pieces against their whole-recording versions; bad inputs."""
import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import soundfile
import torch
import yaml

from local_models.common.audio import AudioError
from local_models.common.cli import run_main
from local_models.common.features import FeatConfig, compute
from local_models.common.pack import PackError, pack_model
from local_models.common.viterbi import viterbi
from local_models.sad import streaming
from local_models.sad.labels import read_rttm, to_intervals, to_mask
from local_models.sad.nets import NETS, CNN1dSAD, SegRNNSAD
from local_models.sad.neural import hmm_smooth, median_smooth
from local_models.sad.statistical import two_class_hmm

SR = 8000
TINY = dict(channels=[4, 8], hidden=8)
NET_CONF = {"cnn1d": {}, "rnn": {}, "seg_rnn": {"seg_len": 5, "seg_shift": 2, "bidirectional": True}}
SYSTEMS = ("cnn_hmm", "cnn_median", "rnn_hmm", "rnn_median", "seg_rnn", "stat_sad", "majority_vote")
EXACT = ("cnn_hmm", "cnn_median", "seg_rnn")  # finite receptive field: chunked == whole


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("SPEECH_RECIPES_CACHE", str(tmp_path / "cache"))
    torch.set_num_threads(1)


# ----------------------------------------------------------------------------- generated audio and a fake recipe
def bursts(seconds: float, seed: int, level: float = 0.01):
    """Buzzy voiced bursts (0.3-1.2 s) in low noise: (wave, [(start_s, end_s)])."""
    rng = np.random.default_rng(seed)
    wave = (rng.standard_normal(int(seconds * SR)) * level).astype(np.float32)
    t, regions = rng.uniform(0.2, 1.0), []
    while t < seconds - 1.5:
        d = rng.uniform(0.3, 1.2)
        a, b = int(t * SR), int((t + d) * SR)
        f0 = rng.uniform(100, 250)
        buzz = np.sign(np.sin(2 * np.pi * f0 * np.arange(b - a) / SR)) * np.hanning(b - a) ** 0.2
        wave[a:b] += (0.2 * rng.uniform(0.3, 1.0) * buzz).astype(np.float32)
        regions.append((a / SR, b / SR))
        t += d + rng.uniform(0.3, 2.0)
    return wave, regions


def calibrate(net, wave, regions):
    """Make a random net a working detector without training: its last layer becomes the linear probe (class-mean
    difference, scaled to logits of about +-4) of its own random features on WAVE labelled by REGIONS."""
    feats = torch.tensor(compute(wave, FeatConfig(kind="stft", sample_rate=SR, win_ms=50, hop_ms=10, n_fft=512)))
    last = net.tcn[-1] if isinstance(net, CNN1dSAD) else net.ff
    seen = []
    hook = last.register_forward_hook(lambda m, i, o: seen.append(i[0].detach()))
    net.frame_probs(feats[None])
    hook.remove()
    x = seen[0][0].T if isinstance(net, CNN1dSAD) else seen[0].reshape(-1, seen[0].shape[-1])
    lab = to_mask(regions, len(feats), 0.01)
    if isinstance(net, SegRNNSAD):  # a segment's label: its last frame's
        lab = lab[np.minimum(np.arange(len(x)) * net.S + net.L - 1, len(lab) - 1)]
    x = x.double().numpy()
    w = x[lab].mean(0) - x[~lab].mean(0)
    p1, p0 = (x[lab] @ w).mean(), (x[~lab] @ w).mean()
    k = 8.0 / (p1 - p0)
    with torch.no_grad():
        last.weight.zero_()
        if isinstance(net, CNN1dSAD):
            last.weight[:, :, last.kernel_size[0] // 2] = torch.tensor(k * w, dtype=torch.float32)
        else:
            last.weight[:] = torch.tensor(k * w, dtype=torch.float32)
        last.bias.fill_(float(-k * (p1 + p0) / 2))


def make_recipe(root: Path) -> Path:
    """A recipe dir as stages 1-8 leave it, with calibrated tiny nets (exp/<net>), thresholds and results.json."""
    recipe = root / "sad1"
    wave, regions = bursts(30, 100)
    torch.manual_seed(0)
    for name, extra in NET_CONF.items():
        d = recipe / "exp" / name
        d.mkdir(parents=True)
        conf = {"model": name, "model_conf": {**TINY, **extra}, "batch_size": 4, "max_epoch": 2, "num_iters_per_epoch": 3,
                "train_data_path_and_name_and_type": [["dump/train/chunks/feats.scp", "feats", "kaldi_ark"],
                                                      ["dump/train/chunks/labels.scp", "labels", "kaldi_ark"]]}
        (d / "config.yaml").write_text(yaml.safe_dump(conf))
        net = NETS[name](**conf["model_conf"]).eval()
        calibrate(net, wave, regions)
        torch.save({f"net.{k}": v for k, v in net.state_dict().items()}, d / "valid.loss.best.pth")
        torch.save({"reporter": {"epoch": 2, "stats": {}}}, d / "checkpoint.pth")
    results = {"corpus": "mini", "recipe": "fearless_steps/sad1", "systems": {}}
    for s in SYSTEMS:
        (recipe / "exp" / s).mkdir(exist_ok=True)  # exp/seg_rnn: net and system
        results["systems"][s] = {"dev": {"dcf": 0.1, "f1": 0.9, "precision": 0.9, "recall": 0.9},
                                 "eval": {"dcf": 0.2, "f1": 0.8, "precision": 0.8, "recall": 0.8}, "rtf": 0.01}
    for s, th in (("cnn_hmm", 0.45), ("rnn_hmm", 0.5), ("seg_rnn", 0.55), ("cnn_median", 0.5), ("majority_vote", 1.5)):
        (recipe / "exp" / s / "threshold").write_text(f"{th}\n")
    # stage 6's FA-bounded operating points (the vote's is never packed: its members keep their DCF thresholds)
    for s, th in (("rnn_hmm", 0.8), ("majority_vote", 2.5)):
        (recipe / "exp" / s / "threshold_fa10").write_text(f"{th}\n")
    (recipe / "exp" / "results.json").write_text(json.dumps(results))
    (recipe / "data" / "train").mkdir(parents=True)
    (recipe / "data" / "train" / "wav.scp").write_text("a /x/a.wav\nb /x/b.wav\n")
    (recipe / "data" / "train" / "reco2dur").write_text("a 1800.0\nb 1800.0\n")
    return recipe


@pytest.fixture(scope="module")
def packed(tmp_path_factory):
    """Every system packed, the archives moved away from a recipe that is then deleted: {system: archive}."""
    from local_models.sad.pack import pack_system

    root = tmp_path_factory.mktemp("sadpack")
    recipe = make_recipe(root)
    away = root / "elsewhere"
    away.mkdir()
    archives = {}
    for s in SYSTEMS:
        out = pack_system(recipe, s, recipe / "exp" / s / "packed" / "model.tar.gz")
        archives[s] = Path(shutil.copy(out, away / f"{s}.tar.gz"))
    keep = root / "recipe_copy"  # for the exp-dir tests
    shutil.copytree(recipe, keep)
    shutil.rmtree(recipe)
    wave, regions = bursts(24, 7)
    soundfile.write(root / "in.wav", wave, SR)
    return {"archives": archives, "recipe": keep, "wav": root / "in.wav", "regions": regions, "wave": wave}


def load(packed, system):
    from local_models.sad.inference import SpeechSegmenter

    return SpeechSegmenter.from_pretrained(packed["archives"][system])


def frame_agreement(a, b, seconds):
    n = int(round(seconds * 100))
    return float(np.mean(to_mask(a, n, 0.01) == to_mask(b, n, 0.01)))


# ----------------------------------------------------------------------------- the chunked pieces, exactly
@pytest.mark.parametrize("seed", range(6))
def test_streaming_viterbi_is_the_whole_viterbi(seed):
    rng = np.random.default_rng(seed)
    states = int(rng.integers(1, 6))
    log_trans, log_init = two_class_hmm(states, 0.9)
    T = int(rng.integers(1, 900))
    # coarse values: many exact ties, which must break as librosa's core breaks them
    emis = np.round(rng.normal(size=(T, 2 * states)) * (2 if seed % 2 else 0.3)) - 0.5 * (rng.random((T, 1)) > 0.5)
    whole = viterbi(emis, log_trans, log_init)
    v = streaming.StreamingViterbi(log_trans, log_init, max_lag=100000)
    cuts = np.sort(rng.integers(0, T + 1, size=int(rng.integers(0, 12))))
    parts = [v.push(emis[a:b]) for a, b in zip(np.r_[0, cuts], np.r_[cuts, T])]
    got = np.concatenate(parts + [v.finish()])
    np.testing.assert_array_equal(got, whole)


def test_streaming_viterbi_lag_is_bounded():
    log_trans, log_init = two_class_hmm(5, 0.9)
    v = streaming.StreamingViterbi(log_trans, log_init, max_lag=50)
    emis = np.zeros((400, 10))  # no evidence: the paths never meet, decisions are forced
    out = [v.push(emis[i: i + 40]) for i in range(0, 400, 40)]
    assert len(v.ptr) <= 50 and sum(map(len, out)) + len(v.finish()) == 400


@pytest.mark.parametrize("seed", range(4))
def test_hmm_and_median_deciders_equal_the_whole_decisions(seed):
    rng = np.random.default_rng(seed)
    T = int(rng.integers(50, 3000))
    post = 1 / (1 + np.exp(-np.cumsum(rng.normal(size=T)) * 0.3 - rng.normal(size=T)))
    th = float(rng.uniform(0.2, 0.8))
    cuts = np.sort(rng.integers(0, T + 1, size=8))
    for decider, whole in ((streaming.HMMDecider(th, 5, 0.9), hmm_smooth(post, th)),
                           (streaming.MedianDecider(th, 0.5), median_smooth(post > th, 0.5)),
                           (streaming.MedianDecider(th, 0.05), median_smooth(post > th, 0.05))):
        parts = [decider.push(post[a:b]) for a, b in zip(np.r_[0, cuts], np.r_[cuts, T])]
        np.testing.assert_array_equal(np.concatenate(parts + [decider.finish()]), whole)


def test_score_windows_keep_whole_recording_scores_and_segment_grid():
    rng = np.random.default_rng(0)
    wave = rng.standard_normal(8000 * 7 + 37).astype(np.float32)

    def score(w):  # frame energy, max over +-3 frames, and a term that depends on the frame's parity (S = 2 grid)
        e = np.pad(w, (0, -len(w) % 80)).reshape(-1, 80).var(axis=1)
        m = np.max(np.stack([np.pad(e, 3, mode="edge")[i: i + len(e)] for i in range(7)]), axis=0)
        return (m + (np.arange(len(e)) % 2) * 100).astype(np.float32)  # detectors' scores are float32

    whole = score(wave)
    for block in (80, 1000, 3333, 20000):
        win = streaming.ScoreWindows(score, left=4, right=4, align=2)
        got = [win.push(wave[a: a + block], final=a + block >= len(wave)) for a in range(0, len(wave), block)]
        np.testing.assert_array_equal(np.concatenate(got), whole)


def test_segment_builder_is_to_intervals():
    rng = np.random.default_rng(1)
    d = rng.random(1000) > 0.6
    b = streaming.SegmentBuilder(0.01)
    got = [s for a in range(0, 1000, 77) for s in b.feed(d[a: a + 77])] + b.close(9.995)
    want = [(float(s), float(e)) for s, e in to_intervals(d, 0.01)]
    want[-1] = (want[-1][0], min(want[-1][1], 9.995))
    assert got == want


# ----------------------------------------------------------------------------- packed systems
def test_cards_and_archives(packed):
    from local_models.common.pack import read_card

    for s, archive in packed["archives"].items():
        card = read_card(archive)
        assert card["paper"] == "sad" and card["system"] == s and card["sample_rate"] == 8000
        assert card["frame_rate"] == 100 and card["metrics"]["dev"]["dcf"] == 0.1 and card["metrics"]["eval"]["f1"] == 0.8
        assert card["corpus"] == "mini" and "speech-segments" in card["usage"]
    card = read_card(packed["archives"]["cnn_hmm"])
    assert card["threshold"] == 0.45 and card["threshold_tuned_on_dev"] and "HMM" in card["decision"]
    t = card["training"]["cnn_hmm"]
    assert t["train_recordings"] == 2 and t["train_hours"] == 1.0 and t["epochs"] == 2 and t["steps"] == 6
    vote = read_card(packed["archives"]["majority_vote"])
    assert vote["threshold"] == 1.5 and set(vote["training"]) == {"cnn_hmm", "rnn_hmm", "seg_rnn"}
    stat = read_card(packed["archives"]["stat_sad"])
    assert not stat["threshold_tuned_on_dev"] and stat["stat_config"]["gamma"] == 25.0


@pytest.mark.parametrize("system", SYSTEMS)
def test_segments_whole_and_chunked(packed, system):
    seg = load(packed, system)
    whole = seg(packed["wav"])
    assert whole and all(0 <= a < b <= 24.0 for a, b in whole)
    # calibrated nets find the bursts (saying "no speech" everywhere scores 0.57; stat_sad: unsupervised, coarser)
    acc = frame_agreement(whole, packed["regions"], 24.0)
    assert acc > (0.7 if system == "stat_sad" else 0.8), acc
    chunked = list(seg.iter_segments(packed["wav"], chunk_s=5.0))  # 5 chunks
    if system in EXACT:
        assert chunked == whole
    else:  # the BiGRU / statistical SAD see 10 s around a chunk instead of the whole file
        assert frame_agreement(chunked, whole, 24.0) >= 0.98
    assert list(seg.iter_segments(packed["wav"], chunk_s=30.0)) == whole  # one chunk: the whole file


def blocks_read(monkeypatch) -> list:
    """The seconds of each block iter_segments reads from now on (appended as they are read)."""
    from local_models.sad import inference

    read, streaming_blocks = [], inference.iter_audio_blocks

    def counting(path, rate, block_s, **kw):
        for block in streaming_blocks(path, rate, block_s, **kw):
            read.append(len(block) / SR)
            yield block

    monkeypatch.setattr(inference, "iter_audio_blocks", counting)
    return read


def test_segments_come_out_while_the_file_is_read(packed, monkeypatch):
    """iter_segments yields a segment once its end is decided, long before the last chunk is read: blocks of 1 s
    growing 1.5x until the first region is out (one block read ahead), then whole chunks."""
    read = blocks_read(monkeypatch)
    segs = load(packed, "cnn_hmm").iter_segments(packed["wav"], chunk_s=8.0)  # 24 s
    first = next(segs)
    assert first[1] < 4.0 and read[:3] == [1.0, 1.5, 2.25] and len(read) <= 5
    n = len(read)  # read when the first region came out: the next block is the last small one, then 8 s each
    rest = list(segs)
    assert read[n + 1:-1] == [8.0] * len(read[n + 1:-1]) and len(read[n + 1:-1]) >= 1 and sum(read) == 24.0
    assert [first] + rest == load(packed, "cnn_hmm")(packed["wav"])


def test_a_short_file_is_read_in_one_block(packed, monkeypatch, tmp_path):
    """A file of at most ONE_BLOCK_UP_TO_S seconds is one block (no growing blocks: the BiGRU would rerun its
    context at each), with the whole-file regions."""
    import soundfile

    from local_models.sad import inference

    read = blocks_read(monkeypatch)
    short = tmp_path / "short.wav"
    soundfile.write(short, packed["wave"][: int(12 * SR)], SR)
    assert 12.0 <= inference.ONE_BLOCK_UP_TO_S
    seg = load(packed, "cnn_hmm")
    assert list(seg.iter_segments(short, chunk_s=60.0)) == seg(short)
    assert read == [12.0]


def test_statistical_sad_starts_with_a_smaller_block_on_a_file_longer_than_a_chunk(packed, monkeypatch):
    """The statistical SAD reads STAT_FIRST_BLOCK_S first (growing 1.5x until a region is out) when the file is
    longer than a chunk, so its first region does not wait for a whole chunk; a file of one chunk stays one block."""
    from local_models.sad import inference

    monkeypatch.setattr(inference, "STAT_FIRST_BLOCK_S", 4.0)
    read = blocks_read(monkeypatch)
    seg = load(packed, "stat_sad")
    whole = seg(packed["wav"])
    chunked = list(seg.iter_segments(packed["wav"], chunk_s=10.0))  # 24 s
    assert read[:2] == [4.0, 6.0] and sum(read) == 24.0 and max(read) <= 10.0
    assert frame_agreement(chunked, whole, 24.0) >= 0.98
    read.clear()
    assert list(seg.iter_segments(packed["wav"], chunk_s=30.0)) == whole and read == [24.0]


def test_any_rate_and_channels(packed):
    seg = load(packed, "cnn_hmm")
    wave = packed["wave"]
    ref = seg(wave, SR)
    assert seg((wave, SR)) == ref and seg(packed["wav"]) == ref
    from scipy.signal import resample_poly

    up = resample_poly(wave, 2, 1).astype(np.float32)
    stereo = np.stack([up, up], axis=1)
    assert frame_agreement(seg(stereo, 16000), ref, 24.0) > 0.93  # resampled twice: not the same samples
    scores = seg.frame_scores(packed["wav"])
    assert scores.shape == (2400,) and scores.dtype == np.float32 and ((scores >= 0) & (scores <= 1)).all()
    assert seg.frame_decisions(packed["wav"]).shape == (2400,)


def test_exp_dir_gives_the_archive_results(packed):
    from local_models.sad.inference import SpeechSegmenter

    for s in ("seg_rnn", "majority_vote"):
        direct = SpeechSegmenter.from_pretrained(packed["recipe"] / "exp" / s)
        assert direct(packed["wav"]) == load(packed, s)(packed["wav"]) and direct.system == s
    with pytest.raises(ValueError, match="'cnn1d' is not a packable SAD system"):
        SpeechSegmenter.from_pretrained(packed["recipe"] / "exp" / "cnn1d")


def test_fa_bounded_operating_point(packed, capsys):
    from local_models.bin.speech_segments import main
    from local_models.common.pack import read_card
    from local_models.sad.inference import SpeechSegmenter

    archive = packed["archives"]["rnn_hmm"]
    assert "--operating_point fa_bounded at 0.8" in read_card(archive)["decision"]
    dcf, bounded = load(packed, "rnn_hmm"), SpeechSegmenter.from_pretrained(archive, operating_point="fa_bounded")
    assert dcf.threshold == 0.5 and dcf.members[0][0].threshold == 0.5
    assert bounded.threshold == 0.8 and bounded.members[0][0].threshold == 0.8 and bounded.members[0][1] == 0.8
    assert main(["-m", str(archive), "--operating_point", "fa_bounded", str(packed["wav"])]) == 0
    assert capsys.readouterr().out.splitlines() == [f"{packed['wav']} {a:.2f} {b:.2f}" for a, b in bounded(packed["wav"])]
    for s, why in (("cnn_hmm", "no FA-bounded threshold"), ("majority_vote", "a vote's members keep their DCF")):
        assert "fa_bounded" not in read_card(packed["archives"][s])["decision"]  # none found; the vote's not packed
        with pytest.raises(ValueError, match=why):
            SpeechSegmenter.from_pretrained(packed["archives"][s], operating_point="fa_bounded")
    with pytest.raises(ValueError, match="operating point 'low'"):
        SpeechSegmenter.from_pretrained(archive, operating_point="low")


# ----------------------------------------------------------------------------- bad input
def test_bad_audio(packed, tmp_path):
    seg = load(packed, "seg_rnn")
    silent = tmp_path / "silent.wav"
    soundfile.write(silent, np.zeros(SR * 3, np.float32), SR)
    assert seg(silent) == [] and list(seg.iter_segments(silent, chunk_s=1.0)) == []
    empty = tmp_path / "empty.wav"
    soundfile.write(empty, np.zeros(0, np.float32), SR)
    for call in (lambda p: seg(p), lambda p: list(seg.iter_segments(p))):
        with pytest.raises(AudioError, match="empty.wav.*no samples"):
            call(empty)
    nan = packed["wave"].copy()
    nan[100] = np.nan
    with pytest.raises(AudioError, match="NaN"):
        seg(nan, SR)
    soundfile.write(tmp_path / "nan.wav", nan, SR, subtype="FLOAT")
    with pytest.raises(AudioError, match="nan.wav: NaN"):
        list(seg.iter_segments(tmp_path / "nan.wav"))
    clipped = np.clip(packed["wave"] * 200, -1, 1)
    soundfile.write(tmp_path / "loud.wav", clipped, SR, subtype="FLOAT")
    with pytest.raises(AudioError, match="clipped"):
        seg(clipped, SR)
    with pytest.raises(AudioError, match=r"loud.wav: clipped \(78"):  # judged on the whole file, as a whole call
        list(seg.iter_segments(tmp_path / "loud.wav"))
    # a clipped first second of a long file is a warning, as in a whole call, not a refusal of its first small block
    head = packed["wave"].copy()
    head[:SR] = 1.0
    soundfile.write(tmp_path / "head.wav", head, SR, subtype="FLOAT")
    assert list(seg.iter_segments(tmp_path / "head.wav")) == seg(tmp_path / "head.wav")
    (tmp_path / "text.wav").write_text("not audio")
    with pytest.raises(AudioError, match="text.wav: cannot read audio"):
        seg(tmp_path / "text.wav")
    with pytest.raises(ValueError, match="needs its sample_rate"):
        seg(packed["wave"])
    with pytest.raises(ValueError, match="chunk_s must be positive"):
        list(seg.iter_segments(packed["wav"], chunk_s=0))


def test_bad_models(packed, tmp_path):
    from local_models.sad.inference import SpeechSegmenter

    data = packed["archives"]["cnn_hmm"].read_bytes()
    (tmp_path / "cut.tar.gz").write_bytes(data[: len(data) // 2])
    with pytest.raises(PackError, match="cut.tar.gz: corrupt archive"):
        SpeechSegmenter.from_pretrained(tmp_path / "cut.tar.gz")
    (tmp_path / "r" / "exp" / "x").mkdir(parents=True)
    (tmp_path / "r" / "exp" / "x" / "m.pth").write_bytes(b"0")
    other = pack_model(tmp_path / "jdit.tar.gz", paper="jdit", system="x", recipe_dir=tmp_path / "r",
                       files={"model_file": tmp_path / "r" / "exp" / "x" / "m.pth"})
    with pytest.raises(PackError, match="jdit.tar.gz: this is a JDI-T .* not a Fearless Steps SAD"):
        SpeechSegmenter.from_pretrained(other)
    with pytest.raises(FileNotFoundError, match="model not found"):
        SpeechSegmenter.from_pretrained(tmp_path / "missing.tar.gz")
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="device 'cuda': torch sees no CUDA GPU"):
            SpeechSegmenter.from_pretrained(packed["archives"]["cnn_hmm"], device="cuda")


# ----------------------------------------------------------------------------- the command
def test_cli(packed, tmp_path, capsys):
    from local_models.bin.speech_segments import main
    from local_models.sad.inference import SpeechSegmenter

    model = str(packed["archives"]["cnn_hmm"])
    wav2 = tmp_path / "second.wav"
    shutil.copy(packed["wav"], wav2)
    assert main(["--model", model, str(packed["wav"]), str(wav2), "--chunk_s", "7"]) == 0
    lines = capsys.readouterr().out.splitlines()
    want = load(packed, "cnn_hmm")(packed["wav"])
    assert lines == [f"{p} {a:.2f} {b:.2f}" for p in (packed["wav"], wav2) for a, b in want]
    rttm, segs = tmp_path / "o" / "out.rttm", tmp_path / "o" / "out.segments"
    assert main(["-m", model, str(wav2), "--rttm", str(rttm), "--segments", str(segs)]) == 0
    np.testing.assert_allclose(read_rttm(rttm)["second"], want, atol=2e-3)
    assert segs.read_text().splitlines()[0].startswith("second-")
    # a bad second file: exit 2, one line naming it, nothing written
    bad = tmp_path / "bad.wav"
    bad.write_text("x")
    out = tmp_path / "never.rttm"
    assert run_main(main, ["-m", model, str(packed["wav"]), str(bad), "--rttm", str(out)], prog="speech-segments") == 2
    err = capsys.readouterr().err.splitlines()  # progress lines of the good files come first
    assert err[-1].startswith("speech-segments: error: ") and "bad.wav" in err[-1] and not out.exists()
    assert run_main(main, ["-m", model, str(wav2), str(tmp_path / "x" / "second.flac")], prog="speech-segments") == 2
    assert "would both be recording 'second'" in capsys.readouterr().err
    assert run_main(main, ["-m", str(wav2), str(wav2)], prog="speech-segments") == 2
    assert "not a model archive" in capsys.readouterr().err
    # what a VAD user sets: the regions tidied as SegmentTidier does, as JSON keyed by the file given
    js = tmp_path / "o" / "out.json"
    assert main(["-m", model, str(wav2), "--json", str(js), "--min_silence_ms", "400", "--speech_pad_ms", "50"]) == 0
    tidied = SpeechSegmenter.from_pretrained(model, min_silence_ms=400, speech_pad_ms=50)(wav2)
    assert json.loads(js.read_text()) == {str(wav2): [[round(a, 3), round(b, 3)] for a, b in tidied]}
    assert run_main(main, ["-m", model, str(wav2), "--min_speech_ms", "-5"], prog="speech-segments") == 2
    assert ">= 0" in capsys.readouterr().err


def test_segment_tidier_against_a_hand_example():
    from local_models.sad.streaming import SegmentTidier

    regions = [(1.0, 1.5), (1.6, 2.0), (3.0, 3.05), (5.0, 6.0), (6.25, 7.0)]
    # pauses under 0.3 s bridged (1.5-1.6, 6.0-6.25), then regions under 0.1 s dropped (3.0-3.05), then padded
    assert SegmentTidier(0.1, 0.3, 0.05).apply(regions, 7.02) == [(0.95, 2.05), (4.95, 7.02)]
    assert SegmentTidier().apply(regions, 7.0) == regions  # no options: the regions as decided
    # padding alone joins what it would make touch: 0.1 s gap < 2 x 0.06 s
    assert SegmentTidier(pad_s=0.06).apply([(1.0, 1.5), (1.6, 2.0)]) == [(0.94, 2.06)]
    assert SegmentTidier(pad_s=0.5).apply([(0.2, 0.4)], 0.6) == [(0.0, 0.6)]  # clipped to the recording
    with pytest.raises(ValueError, match=">= 0"):
        SegmentTidier(min_speech_s=-1)


def test_a_region_that_has_begun_holds_back_the_one_before_it():
    """A region within min_silence of the next one waits while the next has begun but not ended (the bug the
    growing first blocks found: a block ended inside the next region, and the tidier let the first out alone)."""
    from local_models.sad.streaming import SegmentBuilder, SegmentTidier

    d = np.zeros(300, dtype=bool)
    d[100:150] = d[170:260] = True  # 1.0-1.5 s and 1.7-2.6 s: a 0.2 s gap
    builder, tidy = SegmentBuilder(0.01), SegmentTidier(min_silence_s=0.4)
    out = tidy.feed(builder.feed(d[:200])) + tidy.advance(builder.quiet_until)  # 2.0 s read, the second still open
    assert out == [] and builder.quiet_until == 1.7
    out += tidy.feed(builder.feed(d[200:])) + tidy.advance(builder.quiet_until) + tidy.close(3.0)
    assert out == [(1.0, 2.6)] == SegmentTidier(min_silence_s=0.4).apply([(1.0, 1.5), (1.7, 2.6)], 3.0)


@pytest.mark.parametrize("system", ["cnn_hmm", "seg_rnn"])
def test_vad_options_give_the_same_regions_streaming_and_whole(packed, system):
    from local_models.sad.inference import SpeechSegmenter

    seg = SpeechSegmenter.from_pretrained(packed["archives"][system], min_speech_ms=300, min_silence_ms=400,
                                          speech_pad_ms=50)
    whole = seg(packed["wav"])
    plain = load(packed, system)(packed["wav"])
    assert whole != plain and len(whole) <= len(plain)
    assert all(b - a >= 0.3 + 0.1 - 1e-9 or a == 0.0 for a, b in whole)  # min speech + both pads
    assert all(b[0] - a[1] >= 0.4 - 0.1 - 1e-9 for a, b in zip(whole, whole[1:]))  # bridged gaps, less the pads
    for chunk_s in (2.0, 5.0):
        assert list(seg.iter_segments(packed["wav"], chunk_s=chunk_s)) == whole


def test_threshold_override_and_the_shipped_default(packed, tmp_path, monkeypatch):
    from local_models.sad import inference

    low = inference.SpeechSegmenter.from_pretrained(packed["archives"]["cnn_hmm"], threshold=0.01)
    high = inference.SpeechSegmenter.from_pretrained(packed["archives"]["cnn_hmm"], threshold=0.99)
    assert low.threshold == 0.01 and low.members[0][1] == 0.01
    speech = lambda segs: sum(b - a for a, b in segs)  # noqa: E731
    assert speech(low(packed["wav"])) > speech(high(packed["wav"]))
    with pytest.raises(ValueError, match="majority vote"):
        inference.SpeechSegmenter.from_pretrained(packed["archives"]["majority_vote"], threshold=0.5)
    monkeypatch.setattr(inference, "SHIPPED", tmp_path / "none" / "model.tar.gz")
    with pytest.raises(FileNotFoundError, match="no SAD model is shipped"):
        inference.SpeechSegmenter.from_pretrained()
    monkeypatch.setattr(inference, "SHIPPED", packed["archives"]["cnn_hmm"])
    assert inference.SpeechSegmenter.from_pretrained()(packed["wav"]) == load(packed, "cnn_hmm")(packed["wav"])


def test_the_shipped_model_is_small_verified_and_loads_without_a_path(packed):
    from local_models.sad import inference

    assert inference.SHIPPED.is_file() and inference.SHIPPED.stat().st_size <= 5 * 2 ** 20
    seg = inference.SpeechSegmenter.from_pretrained()
    assert seg.system == "rnn_hmm" and seg.card["corpus"] == "real"
    assert seg.card["recipe"] == "egs/debian_speech/sad1" and seg.card["threshold_tuned_on_dev"]
    assert seg((np.zeros(8000 * 3, np.float32), 8000)) == []  # digital silence: no speech
    regions = seg(packed["wav"])
    assert all(0 <= a < b <= 24.0 for a, b in regions)
