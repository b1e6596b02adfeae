"""KSS / JDI-T recipe, data side: transcript reader and split, jamo g2p, token list, fbank features,
feats_stats.npz, reference durations, and a smoke run of egs/kss/tts1 stages 1-3 on a 12-utterance mini corpus."""
import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import soundfile

from local_models.common.audio import load_audio
from local_models.common.datadir import read_table
from local_models.common.dirops import held_out_count
from local_models.common.synth import espeak_available
from local_models.common.validate import validate_data_dir
from local_models.jdit import data, durations, g2p, phonemes
from layout_kss import make_kss
from recipe_runner import run_recipe

ROOT = Path(__file__).resolve().parents[1]
RECIPE = ROOT / "egs" / "kss" / "tts1"
PREP = RECIPE / "local" / "prepare_kss.py"
needs_sox = pytest.mark.skipif(shutil.which("sox") is None, reason="needs sox")
needs_espeak = pytest.mark.skipif(not espeak_available(), reason="needs espeak-ng")
needs_venv = pytest.mark.skipif(not (ROOT / "tools" / "venv" / "bin" / "python").exists(), reason="needs tools/venv")


# ----------------------------------------------------------------------------- g2p

def test_g2p_hand_example_splits_syllables_into_initial_vowel_final():
    # 한 = ㅎ ㅏ ㄴ, 국 = ㄱ ㅜ ㄱ, 어 = (silent) ㅇ ㅓ ; initial ㄱ (U+1100) and final ㄱ (U+11A8) differ
    assert g2p.text_to_tokens("한국어") == ["\u1112", "\u1161", "\u11ab", "\u1100", "\u116e", "\u11a8", "\u110b", "\u1165"]


def test_g2p_spaces_and_punctuation():
    toks = g2p.text_to_tokens("…“안녕,”   세상!  어디 가?! ")
    # leading punctuation dropped, quotes silent, comma -> <pau> replacing the space, runs collapse to the
    # strongest mark, trailing space dropped, no <space> at either end
    assert toks == ["ᄋ", "ᅡ", "ᆫ", "ᄂ", "ᅧ", "ᆼ", "<pau>", "ᄉ", "ᅦ", "ᄉ", "ᅡ", "ᆼ", "!",
                    "ᄋ", "ᅥ", "ᄃ", "ᅵ", "<space>", "ᄀ", "ᅡ", "?"]
    assert set(toks) <= set(g2p.INVENTORY)
    # compatibility jamo: consonant -> initial form, cluster with no initial form -> final form
    assert g2p.text_to_tokens("ㅋ ㄳ ㅘ") == ["\u110f", "<space>", "\u11aa", "<space>", "\u116a"]


@pytest.mark.parametrize("text,char,col", [("TV를 봤다", "T", 1), ("그는 3번", "3", 4), ("漢字를 읽다", "漢", 1)])
def test_g2p_unknown_characters(text, char, col):
    with pytest.raises(g2p.G2PError) as e:
        g2p.text_to_tokens(text)
    assert e.value.char == char and e.value.column == col and f"column {col}" in str(e.value)
    dropped = []
    assert g2p.text_to_tokens(text, unknown="drop", dropped=dropped) and char in dropped
    with pytest.raises(ValueError, match="no Korean letter"):
        g2p.text_to_tokens("...")


def test_token_list_in_espnet_order():
    seqs = [["ᄀ", "ᅡ", "<space>", "ᄀ", "ᅡ"], ["ᄂ", "ᅡ", "."]]
    seen = g2p.token_list(seqs, full_inventory=False)
    assert seen == ["<blank>", "<unk>", "ᅡ", "ᄀ", ".", "<space>", "ᄂ", "<sos/eos>"]  # by count, ties C order
    full = g2p.token_list(reversed(seqs))
    assert full[:len(seen) - 1] == seen[:-1] and full[-1] == "<sos/eos>"  # utterance order does not matter
    assert len(full) == len(set(full)) == len(g2p.INVENTORY) + 3 == 75
    with pytest.raises(ValueError, match="reserved"):
        g2p.token_list([["<unk>"]])


TOKEN_TYPES = ["jamo", pytest.param("espeak", marks=needs_espeak)]


@pytest.mark.parametrize("token_type", TOKEN_TYPES)
def test_jdit_text_g2p_names_file_and_line(tmp_path, token_type):
    from local_models.bin import jdit_text

    d = tmp_path / "x"
    d.mkdir()
    (d / "text").write_text("kss-a 안녕하세요.\nkss-b 3월에 만나요\n", encoding="utf-8")
    assert jdit_text.main(["g2p", "--token-type", token_type, str(d)]) == 1
    assert not (d / "text_phn").exists()
    assert jdit_text.main(["g2p", "--token-type", token_type, "--unknown", "drop", str(d)]) == 0
    phn = read_table(d / "text_phn")
    first = {"jamo": ["ᄋ", "ᅯ", "ᆯ"], "espeak": ["w", "@", "*"]}[token_type]  # "3" dropped: 월에 ...
    assert phn["kss-b"].split()[:len(first)] == first


@pytest.mark.parametrize("token_type", TOKEN_TYPES)
def test_jdit_text_g2p_error_message(tmp_path, capsys, token_type):
    from local_models.bin import jdit_text

    (tmp_path / "text").write_text("kss-a 안녕\nkss-b TV 봐\n", encoding="utf-8")
    jdit_text.main(["g2p", "--token-type", token_type, str(tmp_path)])  # espeak-ng would read 'TV': refused too
    err = capsys.readouterr().err
    assert f"{tmp_path / 'text'}:2: utterance kss-b: character 'T'" in err


# ----------------------------------------------------------------------------- KSS transcript

@needs_sox
def test_prepare_kss_split_resampling_and_layout(tmp_path):
    order = [0, 1, 2, 3, 4, 5, 6, 11, 10, 9, 8, 7]  # file order != sorted order: the split follows the file
    make_kss(tmp_path / "kss", order=order)
    proc = subprocess.run([sys.executable, str(PREP), "--dev", "3", "--test", "2", "--ood-text",
                           str(RECIPE / "local" / "ood_ko.txt"), str(tmp_path / "kss"), str(tmp_path / "data")],
                          capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    sets = {x: list(read_table(tmp_path / "data" / x / "utt2spk")) for x in ("train", "dev", "test")}
    assert sets["test"] == ["kss-1_0007", "kss-1_0008"]   # the last 2 lines, in C order
    assert sets["dev"] == ["kss-1_0009", "kss-1_0010", "kss-1_0011"]  # the 3 lines before them
    assert sets["train"] == [f"kss-1_{i:04d}" for i in range(7)]
    text = read_table(tmp_path / "data" / "train" / "text")
    assert text["kss-1_0003"] == "그는 삼번 왔다."  # expanded column, whitespace squeezed
    assert set(read_table(tmp_path / "data" / "dev" / "utt2spk").values()) == {"kss"}
    wav = read_table(tmp_path / "data" / "dev" / "wav.scp")["kss-1_0011"]
    assert wav.startswith("sox ") and "-r 22050" in wav and wav.endswith("|")
    x, sr = load_audio(wav)
    assert sr == 22050 and abs(len(x) - round(0.21 * 22050)) <= 2 and 0.2 < np.abs(x).max() < 0.4
    assert float(read_table(tmp_path / "data" / "dev" / "utt2dur")["kss-1_0011"]) == pytest.approx(0.21, abs=1e-3)
    for x in ("train", "dev", "test"):
        assert validate_data_dir(tmp_path / "data" / x, check_feats=False) == []
    ood = read_table(tmp_path / "data" / "ood" / "text")
    assert len(ood) == 20 and list(read_table(tmp_path / "data" / "ood" / "spk2utt")) == ["kss"]
    # a rerun swaps the dirs in whole: a stray file of a later stage does not survive
    (tmp_path / "data" / "train" / "feats.scp").write_text("stale\n")
    subprocess.run([sys.executable, str(PREP), "--dev", "3", "--test", "2", str(tmp_path / "kss"),
                    str(tmp_path / "data")], check=True, capture_output=True, cwd=ROOT)
    assert not (tmp_path / "data" / "train" / "feats.scp").exists()


@pytest.mark.parametrize("damage,message", [
    (lambda p: p.write_text(p.read_text().replace("이번   왔다.|", "이번|왔다.|")), "transcript.v.1.4.txt:3: expected 6"),
    (lambda p: (p.parent / "1" / "1_0004.wav").unlink(), "transcript.v.1.4.txt:5: wav file 1/1_0004.wav not found"),
    (lambda p: p.write_text(p.read_text().replace("|그는  일번   왔다.|", "| |")),
     "transcript.v.1.4.txt:2: empty expanded text"),
    (lambda p: p.write_text(p.read_text() + "1/1_0003.wav|a|b|c|1.0|d\n"), "transcript.v.1.4.txt:13: file stem '1_0003' already used on line 4"),
    (lambda p: p.write_text(p.read_text().replace("|0.1|", "|zero|", 1)), "transcript.v.1.4.txt:1: duration field 'zero'"),
    (lambda p: soundfile.write(p.parent / "1" / "1_0005.wav", np.zeros((100, 2)), 44100),
     "transcript.v.1.4.txt:6: .*1_0005.wav has 2 channels"),
])
def test_transcript_errors_name_file_and_line(tmp_path, damage, message):
    make_kss(tmp_path / "kss")
    damage(tmp_path / "kss" / "transcript.v.1.4.txt")
    with pytest.raises(data.CorpusError, match=message.replace(".txt", r"\.txt")):
        data.read_transcript(tmp_path / "kss" / "transcript.v.1.4.txt")


def test_transcript_found_and_wavs_under_kss_subdir(tmp_path, capsys):
    make_kss(tmp_path / "db" / "kss", n=4)
    (tmp_path / "db" / "kss" / "transcript.v.1.4.txt").rename(tmp_path / "db" / "transcript.v.1.4.txt")
    entries = data.read_transcript(data.find_transcript(tmp_path / "db"))
    assert [e.utt for e in entries] == [f"kss-1_{i:04d}" for i in range(4)] and entries[0].sample_rate == 44100
    with pytest.raises(data.CorpusError, match="found no transcript"):
        data.find_transcript(tmp_path / "db" / "kss" / "1")
    # CLI: error names the line, exit code 1
    (tmp_path / "db" / "transcript.v.1.4.txt").write_text("1/1_0000.wav|a|b\n", encoding="utf-8")
    from importlib.util import module_from_spec, spec_from_file_location

    spec = spec_from_file_location("prepare_kss", PREP)
    mod = module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert mod.main([str(tmp_path / "db"), str(tmp_path / "data")]) == 1
    assert "transcript.v.1.4.txt:1: expected 6" in capsys.readouterr().err


def test_held_out_split():
    entries = list(range(12853))
    n_dev, n_test = held_out_count("200", 12853), held_out_count("50", 12853)
    s = data.split_held_out(entries, n_dev, n_test)
    assert (len(s["train"]), len(s["dev"]), len(s["test"])) == (12603, 200, 50)
    assert s["dev"][0] == 12603 and s["test"][0] == 12803 and s["test"][-1] == 12852
    assert held_out_count("5%", 300) == 15 and held_out_count("5%", 12) == 1
    assert data.split_held_out(list(range(5)), 2, 0)["test"] == []
    with pytest.raises(ValueError):
        data.split_held_out(list(range(5)), 3, 2)
    with pytest.raises(ValueError):
        held_out_count("-3", 10)


# ----------------------------------------------------------------------------- features, stats, durations

def test_fbank_matches_espnet_tts_feats_extract():
    import torch
    from espnet2.tts.feats_extract.log_mel_fbank import LogMelFbank

    from local_models.bin.extract_feats import get_parser
    from local_models.common.features import FeatConfig, compute

    conf = (RECIPE / "conf" / "fbank.conf").read_text().split()
    args = get_parser().parse_args(conf + ["d", "o"])
    assert (args.kind, args.sample_rate, args.n_fft, args.hop_length, args.win_length, args.n_mels, args.fmin,
            args.fmax) == ("fbank", 22050, 1024, 256, 1024, 80, 80, 7600)
    cfg = FeatConfig("fbank", 22050, 1024 * 1000 / 22050, 256 * 1000 / 22050, 1024, 80, fmin=80, fmax=7600)
    assert (cfg.hop_length, cfg.win_length, cfg.fft_size) == (256, 1024, 1024)
    rng = np.random.default_rng(0)
    wave = (0.1 * rng.standard_normal(5000)).astype(np.float32)
    wave[:2000] *= 1e-3
    ours = compute(wave, cfg)
    ref, _ = LogMelFbank(fs=22050, n_fft=1024, hop_length=256, win_length=1024, fmin=80, fmax=7600)(
        torch.from_numpy(wave)[None])
    assert ours.shape == (1 + 5000 // 256, 80)
    np.testing.assert_allclose(ours, ref[0].numpy(), atol=1e-4)


def test_feats_stats_npz_is_what_global_mvn_loads(tmp_path):
    import kaldiio
    import torch
    from espnet2.layers.global_mvn import GlobalMVN

    from local_models.bin import feats_stats

    rng = np.random.default_rng(1)
    mats = {"a": rng.normal(3, 2, (7, 4)).astype(np.float32), "b": rng.normal(3, 2, (5, 4)).astype(np.float32)}
    with kaldiio.WriteHelper(f"ark,scp:{tmp_path}/f.ark,{tmp_path}/f.scp") as w:
        for k, m in mats.items():
            w(k, m)
    assert feats_stats.main([str(tmp_path / "f.scp"), str(tmp_path / "stats.npz")]) == 0
    s = np.load(tmp_path / "stats.npz")
    allf = np.concatenate(list(mats.values())).astype(np.float64)
    assert int(s["count"]) == 12
    np.testing.assert_allclose(s["sum"], allf.sum(0), rtol=1e-6)
    np.testing.assert_allclose(s["sum_square"], (allf ** 2).sum(0), rtol=1e-6)
    y, _ = GlobalMVN(str(tmp_path / "stats.npz"))(torch.from_numpy(allf[None]).float(), torch.tensor([12]))
    np.testing.assert_allclose(y[0].mean(0).numpy(), 0, atol=1e-5)
    np.testing.assert_allclose(y[0].std(0, unbiased=False).numpy(), 1, atol=1e-4)


def test_durations_align_jamo_to_espeak_phones():
    toks = g2p.text_to_tokens("가요, 닭.")  # ᄀ ᅡ ᄋ ᅭ <pau> ᄃ ᅡ ᆰ .
    # (start s, dur s, phone) as in a phones.ctm: leading silence, "g a j o", pause, "d a k", final silence
    ctm = [(0.0, 0.05, "sil"), (0.05, 0.05, "g"), (0.1, 0.1, "a"), (0.2, 0.05, "j"), (0.25, 0.1, "o"),
           (0.35, 0.2, "sil"), (0.55, 0.05, "d"), (0.6, 0.1, "a"), (0.7, 0.05, "k"), (0.75, 0.25, "sil")]
    spans, cost = durations.align(toks, [p for _, _, p in ctm])
    assert cost == pytest.approx(1.0)  # only the leading silence, which the first token has to take
    assert [tuple(s) for s in spans] == [(0, 2), (2, 3), (3, 3), (3, 5), (5, 6), (6, 7), (7, 8), (8, 9), (9, 10)]
    frames, _ = durations.token_frames(toks, ctm, num_frames=100, sample_rate=1000, hop=10)
    assert frames == [10, 10, 0, 15, 20, 5, 10, 5, 25] and sum(frames) == 100  # silent ㅇ gets 0, ㅛ = "j o"


# ----------------------------------------------------------------------------- recipe

def test_tools_have_help():
    from local_models.bin import feats_stats, jdit_text

    for parser in (jdit_text.get_parser(), feats_stats.get_parser()):
        with pytest.raises(SystemExit) as e:
            parser.parse_args(["--help"])
        assert e.value.code == 0
    for script in ("prepare_kss.py", "make_mini_corpus.py"):
        proc = subprocess.run([sys.executable, str(RECIPE / "local" / script), "--help"], capture_output=True,
                              text=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
        assert proc.returncode == 0 and "usage" in proc.stdout


@needs_espeak
def test_mini_corpus_is_deterministic(tmp_path):
    cmd = [sys.executable, str(RECIPE / "local" / "make_mini_corpus.py"), "--utts", "10", "--nj", "1"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for out in ("a", "b"):
        subprocess.run(cmd + [str(tmp_path / out)], check=True, capture_output=True, env=env)
    files = sorted(p.relative_to(tmp_path / "a") for p in (tmp_path / "a").rglob("*") if p.is_file())
    assert len(files) == 12  # transcript, phones.ctm, 10 wavs
    for f in files:
        assert (tmp_path / "a" / f).read_bytes() == (tmp_path / "b" / f).read_bytes(), f
    lines = (tmp_path / "a" / "transcript.v.1.4.txt").read_text(encoding="utf-8").splitlines()
    assert all(l.split("|")[1][-1] in ".?!" for l in lines) and soundfile.info(tmp_path / "a" / "1" / "1_0000.wav").samplerate == 22050


@pytest.fixture
def recipe(tmp_path):
    dst = tmp_path / "tts1"
    shutil.copytree(RECIPE, dst, ignore=shutil.ignore_patterns("data", "dump", "exp", "downloads"))
    return dst


@needs_venv
def test_help_and_missing_inputs(recipe):
    proc = run_recipe(recipe, "--help")
    assert "Stages: 1 data" in proc.stdout and "3 text" in proc.stdout and "--mini-utts" in proc.stdout
    proc = run_recipe(recipe, "--stage", "2", check=False)
    assert proc.returncode != 0 and "run stage 1 (data)" in proc.stderr


@needs_venv
@needs_espeak
def test_smoke_stages_1_to_3_on_a_tiny_mini_corpus(recipe):
    import kaldiio
    import torch
    from espnet2.layers.global_mvn import GlobalMVN

    run_recipe(recipe, "--stop-stage", "3", "--mini-utts", "12")
    d = recipe / "data"
    utts = {x: list(read_table(d / x / "utt2spk")) for x in ("train", "dev", "test", "ood")}
    assert [len(utts[x]) for x in ("train", "dev", "test", "ood")] == [10, 1, 1, 20]
    assert utts["test"] == ["kss-1_0011"] and utts["dev"] == ["kss-1_0010"]
    for x in utts:
        assert validate_data_dir(d / x) == []  # incl. durations summing to utt2num_frames
        feats = dict(kaldiio.load_scp_sequential(str(d / x / "feats.scp")))
        nsamp = read_table(d / x / "utt2num_samples")
        assert list(feats) == utts[x] and all(m.shape == (1 + int(nsamp[u]) // 256, 80) for u, m in feats.items())
        phn = read_table(d / x / "text_phn")
        dur = read_table(d / x / "durations")
        assert list(phn) == utts[x] and all(len(dur[u].split()) == len(phn[u].split()) for u in phn)
    tokens = (d / "token_list" / "phn" / "tokens.txt").read_text(encoding="utf-8").splitlines()
    assert tokens[:2] == ["<blank>", "<unk>"] and tokens[-1] == "<sos/eos>" and "sil" in tokens
    assert set(tokens[2:-1]) == set(phonemes.inventory()) | {t for u in read_table(d / "train" / "text_phn").values()
                                                             for t in u.split()}
    for x in utts:
        shape = read_table(recipe / "dump" / x / "text_shape.phn")
        assert all(shape[u] == f"{len(v.split())},{len(tokens)}" for u, v in read_table(d / x / "text_phn").items())
    # espeak-ng phoneme tokens (the default) are the mini corpus' phone events, one to one: each token's frames are
    # its phone's span in the CTM, boundaries rounded to frames (recomputed here from the CTM)
    ctm = {}
    for line in (d / "train" / "phones.ctm").read_text().splitlines():
        utt, _, start, length, phone = line.split()
        ctm.setdefault(utt, []).append((float(start), float(start) + float(length), phone))
    phn, dur = read_table(d / "train" / "text_phn"), read_table(d / "train" / "durations")
    n_frames = read_table(d / "train" / "utt2num_frames")
    for u in phn:
        assert phn[u].split() == [p for _, _, p in ctm[u]]
        edges = [0] + [round(s * 22050 / 256) for s, _, _ in ctm[u][1:]] + [int(n_frames[u])]
        assert [int(f) for f in dur[u].split()] == np.diff(edges).tolist()
    mvn = GlobalMVN(str(recipe / "dump" / "train" / "feats_stats.npz"))
    allf = np.concatenate([m for _, m in kaldiio.load_scp_sequential(str(d / "train" / "feats.scp"))])
    y, _ = mvn(torch.from_numpy(allf[None]), torch.tensor([len(allf)]))
    assert abs(float(y.mean())) < 1e-3 and abs(float(y.std()) - 1) < 1e-2
    # re-running stage 3 gives byte-identical outputs (no appended lines)
    outs = [p for x in utts for p in (d / x / "text_phn", d / x / "durations")] + [d / "token_list/phn/tokens.txt"]
    before = {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in outs}
    run_recipe(recipe, "--stage", "3", "--stop-stage", "3", "--mini-utts", "12")
    assert {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in outs} == before
    # the jamo front end (recorded speech): every jamo of the inventory gets a token, durations come from aligning
    # the jamo to the phones: a silent initial ㅇ mostly takes no frame (only espeak's short glottal onset of some
    # vowel-initial words), the final punctuation takes the final silence, vowels are long
    run_recipe(recipe, "--stage", "3", "--stop-stage", "3", "--mini-utts", "12", "--token-type", "jamo")
    tokens = (d / "token_list" / "phn" / "tokens.txt").read_text(encoding="utf-8").splitlines()
    assert tokens[2] == "ᅡ" and len(tokens) == 75
    phn, dur = read_table(d / "train" / "text_phn"), read_table(d / "train" / "durations")
    pairs = [(t, int(f)) for u in phn for t, f in zip(phn[u].split(), dur[u].split())]
    ieung = [f for t, f in pairs if t == "ᄋ"]
    assert np.mean(ieung) < 2 and np.mean([f == 0 for f in ieung]) > 0.6
    assert np.mean([f for t, f in pairs if t in ".?!"]) > 5 and np.mean([f for t, f in pairs if t in g2p.VOWELS]) > 5


@needs_venv
@needs_sox
def test_real_corpus_layout_through_the_recipe(recipe, tmp_path):
    """db.sh KSS=<dir>: 44.1 kHz wavs resampled by sox pipes, text-only data/ood gets tokens but no features; the
    jamo front end (recorded speech has no engine events)."""
    make_kss(tmp_path / "kss", layout="kaggle")  # transcript beside kss/1/: the Kaggle archive as unpacked
    run_recipe(recipe, "--stop-stage", "3", "--kss-dev", "2", "--kss-test", "1", "--token-type", "jamo",
               extra_env={"KSS": str(tmp_path / "kss")})
    d = recipe / "data"
    assert list(read_table(d / "test" / "utt2spk")) == ["kss-1_0011"]
    assert not (d / "ood" / "wav.scp").exists() and not (d / "ood" / "feats.scp").exists()
    assert len(read_table(d / "ood" / "text_phn")) == 20 and not (d / "train" / "durations").exists()
    frames = read_table(d / "train" / "utt2num_frames")
    assert frames["kss-1_0000"] == str(1 + 2205 // 256)  # 0.1 s at 44.1 kHz -> 2205 samples at 22.05 kHz
    assert read_table(d / "train" / "text_phn")["kss-1_0003"].split()[:6] == ["ᄀ", "ᅳ", "ᄂ", "ᅳ", "ᆫ", "<space>"]
