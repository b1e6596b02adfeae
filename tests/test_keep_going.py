"""--keep_going and the progress lines of speech-segments, speech-to-units, units-to-speech and text-to-speech
(issue #52; local_models/common/cli.py's InputLoop): a batch with one bad input. Without --keep_going: exit 2, one
error line, no output. With it: exit 2, one `<command>: error: <input>: <reason>` line, a `[i/n] <input>: ...` line
per good input on stderr, the good inputs' outputs written, and stdout holding the results alone; every input bad:
exit 2 and the output files written empty (no stale file of an earlier run left). Tiny models: the shipped SAD model,
the random VQ-VAE / inverter of test_vqvae_inference, the random SALAD of test_salad_inference, the random RNN-T of
test_multisoftmax_inference."""
import json
import re
import shutil

import pytest
import soundfile
from test_multisoftmax_inference import SYSTEMS as STT_SYSTEMS
from test_multisoftmax_inference import make_recipe as stt_recipe
from test_salad_inference import fake_recipe as salad_recipe
from test_vqvae_inference import INV, SYSTEM, build_recipe, speech_like

from local_models.bin import speech_segments, speech_to_text, speech_to_units, text_to_speech, units_to_speech
from local_models.common.cli import run_main

PROGRESS = re.compile(r"\[(\d+)/(\d+)\] (\S+): (\d+\.\d) s in \d+\.\d\d s, RTF \d+\.\d{3}$")


@pytest.fixture(scope="module", autouse=True)
def cache(tmp_path_factory):
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SPEECH_RECIPES_CACHE", str(tmp_path_factory.mktemp("cache")))
        yield


@pytest.fixture(scope="module")
def vqvae(tmp_path_factory):
    """The packed VQ-VAE and its inverter (tiny, random), the recipe that made them deleted."""
    from local_models.vqvae.pack import pack_system

    root = tmp_path_factory.mktemp("vqvae")
    recipe = build_recipe(root)
    (root / "fresh").mkdir()
    archives = {name: shutil.copy(pack_system(recipe, name, recipe / f"{name}.tar.gz"), root / "fresh")
                for name in (SYSTEM, INV)}
    shutil.rmtree(recipe)
    return archives


def batch(tmp_path, names=("a", "bad", "c"), seconds=1.3):
    """Speech-like wavs, and a text file named bad.wav: [paths]."""
    paths = []
    for k, name in enumerate(names):
        path = tmp_path / f"{name}.wav"
        if name == "bad":
            path.write_text("not audio")
        else:
            soundfile.write(path, *speech_like(seconds, 16000, seed=k))
        paths.append(str(path))
    return paths


def run(capsys, main, prog, argv):
    capsys.readouterr()
    rc = run_main(main, list(map(str, argv)), prog=prog)
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return rc, out, err.splitlines()


def check_stderr(err, prog, inputs, bad, audio_s=None):
    """One progress line per good input, in order, numbered by its place; one error line naming BAD; a progress line
    gives the seconds of audio AUDIO_S[input] (the input's or the one made) when given."""
    errors = [line for line in err if line.startswith(f"{prog}: error: ")]
    assert len(errors) == 1 and errors[0].startswith(f"{prog}: error: {bad}: "), err
    progress = [PROGRESS.match(line) for line in err if line.startswith("[")]
    good = [p for p in inputs if p != bad]
    assert [m.group(3) for m in progress if m] == good and len(progress) == len(good), err
    for m in progress:
        assert int(m.group(1)) == inputs.index(m.group(3)) + 1 and int(m.group(2)) == len(inputs)
        if audio_s:
            assert float(m.group(4)) == pytest.approx(audio_s[m.group(3)], abs=0.051)


def test_speech_segments(tmp_path, capsys):
    """The shipped SAD model; RTTM / JSON written once with the good files alone; stdout: their regions."""
    from local_models.sad.inference import SpeechSegmenter

    files = batch(tmp_path)
    rttm, js = tmp_path / "o" / "out.rttm", tmp_path / "o" / "out.json"
    argv = [*files, "--rttm", rttm, "--json", js]
    rc, out, err = run(capsys, speech_segments.main, "speech-segments", argv)
    assert rc == 2 and not rttm.exists() and not js.exists() and out == ""
    assert err[-1].startswith(f"speech-segments: error: {files[1]}: ") and err[0].startswith(f"[1/3] {files[0]}: ")
    rc, out, err = run(capsys, speech_segments.main, "speech-segments", [*argv, "--keep_going"])
    assert rc == 2 and out == ""
    check_stderr(err, "speech-segments", files, files[1], {p: 1.3 for p in files})
    assert {line.split()[1] for line in rttm.read_text().splitlines()} <= {"a", "c"}
    seg = SpeechSegmenter.from_pretrained()
    want = {p: seg(p) for p in (files[0], files[2])}
    assert want[files[0]] and want[files[2]]  # the regions below are not vacuous
    got = json.loads(js.read_text())
    assert got == {p: [[round(a, 3), round(b, 3)] for a, b in segs] for p, segs in want.items()}
    rc, out, err = run(capsys, speech_segments.main, "speech-segments", [*files, "--keep_going", "--chunk_s", "0"])
    assert rc == 2 and out.splitlines() == [f"{p} {a:.2f} {b:.2f}" for p, segs in want.items() for a, b in segs]
    check_stderr(err, "speech-segments", files, files[1])


def test_speech_to_units(vqvae, tmp_path, capsys):
    from local_models.vqvae.inference import Speech2Units

    files = batch(tmp_path)
    units = tmp_path / "units.txt"
    argv = [*files, "--model", vqvae[SYSTEM], "-o", units]
    rc, out, err = run(capsys, speech_to_units.main, "speech-to-units", argv)
    assert rc == 2 and not units.exists() and err[-1].startswith(f"speech-to-units: error: {files[1]}: ")
    rc, out, err = run(capsys, speech_to_units.main, "speech-to-units", [*argv, "--keep_going"])
    assert rc == 2 and out == ""
    check_stderr(err, "speech-to-units", files, files[1], {p: 1.3 for p in files})
    assert re.search(r"bitrate \d+\.\d\d bits/s over 2 file\(s\)", err[-1])
    s2u = Speech2Units.from_pretrained(vqvae[SYSTEM])
    want = [" ".join([name, *map(str, s2u(p)["units"])]) for name, p in (("a", files[0]), ("c", files[2]))]
    assert units.read_text().splitlines() == want
    rc, out, err = run(capsys, speech_to_units.main, "speech-to-units", argv[:-2] + ["--keep_going"])
    assert rc == 2 and out.splitlines() == want  # stdout: the units lines alone
    check_stderr(err, "speech-to-units", files, files[1])


def all_bad(tmp_path, n=2):
    """N text files named bad<k>.wav: [paths]."""
    paths = [tmp_path / f"bad{k}.wav" for k in range(n)]
    for path in paths:
        path.write_text("not audio")
    return list(map(str, paths))


def stale(*paths):
    """Output files of an earlier run at PATHS."""
    for path in paths:
        path.write_text("stale line of an earlier run\n")


def check_all_failed(err, prog, inputs):
    errors = [line for line in err if line.startswith(f"{prog}: error: ")]
    assert [e.split(": ")[2] for e in errors] == inputs and not any(line.startswith("[") for line in err), err


def test_speech_segments_every_file_bad(tmp_path, capsys):
    """--keep_going with no file done: the RTTM / segments / JSON files are written, empty (an earlier run's files
    would pass for this run's); without it, an error and the earlier files untouched."""
    files = all_bad(tmp_path)
    outs = rttm, segs, js = tmp_path / "out.rttm", tmp_path / "out.segments", tmp_path / "out.json"
    stale(*outs)
    argv = [*files, "--rttm", rttm, "--segments", segs, "--json", js]
    rc, out, err = run(capsys, speech_segments.main, "speech-segments", argv)
    assert rc == 2 and out == "" and all(p.read_text() == "stale line of an earlier run\n" for p in outs)
    rc, out, err = run(capsys, speech_segments.main, "speech-segments", [*argv, "--keep_going"])
    assert rc == 2 and out == "" and rttm.read_text() == segs.read_text() == "" and json.loads(js.read_text()) == {}
    check_all_failed(err, "speech-segments", files)


def test_speech_to_units_every_file_bad(vqvae, tmp_path, capsys):
    files = all_bad(tmp_path)
    units = tmp_path / "units.txt"
    stale(units)
    argv = [*files, "--model", vqvae[SYSTEM], "-o", units]
    rc, out, err = run(capsys, speech_to_units.main, "speech-to-units", argv)
    assert rc == 2 and units.read_text() == "stale line of an earlier run\n"
    rc, out, err = run(capsys, speech_to_units.main, "speech-to-units", [*argv, "--keep_going"])
    assert rc == 2 and out == "" and units.read_text() == ""
    check_all_failed(err, "speech-to-units", files)  # and no bitrate line: no file encoded


def test_speech_to_text_every_input_bad(tmp_path, capsys):
    from local_models.multisoftmax.pack import pack_system

    recipe = stt_recipe(tmp_path / "indic", {"multisoftmax_lid": STT_SYSTEMS["multisoftmax_lid"]})
    archive = pack_system(recipe, "multisoftmax_lid", tmp_path / "lid.tar.gz")
    files = all_bad(tmp_path)
    hyps = tmp_path / "hyps.txt"
    stale(hyps)
    argv = [*files, "--model", archive, "-o", hyps]
    rc, out, err = run(capsys, speech_to_text.main, "speech-to-text", argv)
    assert rc == 2 and hyps.read_text() == "stale line of an earlier run\n"
    rc, out, err = run(capsys, speech_to_text.main, "speech-to-text", [*argv, "--keep_going"])
    assert rc == 2 and out == "" and hyps.read_text() == ""
    check_all_failed(err, "speech-to-text", files)


def test_units_to_speech(vqvae, tmp_path, capsys):
    units = tmp_path / "set.units"
    units.write_text("a 1 2 3 4 5 6\nb 1 2 99 4\nc 7 7 6 5\n")
    wavs = tmp_path / "wavs"
    argv = [units, "--model", vqvae[INV], "-o", wavs]
    rc, out, err = run(capsys, units_to_speech.main, "units-to-speech", argv)
    assert rc == 2 and not wavs.exists() and out == ""
    assert err[-1] == f"units-to-speech: error: {units}:2: 'b': unit 99 at position 2 is not a code of this codebook " \
                      "(0..7)"
    rc, out, err = run(capsys, units_to_speech.main, "units-to-speech", [*argv, "--keep_going"])
    assert rc == 2 and sorted(p.name for p in wavs.iterdir()) == ["a.wav", "c.wav"]
    made = {f"{units}:{n}": soundfile.info(wavs / f"{name}.wav").duration for n, name in ((1, "a"), (3, "c"))}
    assert made[f"{units}:1"] == pytest.approx((4 * 6 - 1) * 0.01)  # 4 frames of 10 ms per unit
    check_stderr(err, "units-to-speech", [f"{units}:{n}" for n in (1, 2, 3)], f"{units}:2", made)
    assert out.splitlines() == [f"{wavs / n}.wav\t{s:.2f} s\tvoice V001" for n, s in zip("ac", made.values())]


def test_units_to_speech_malformed_line(vqvae, tmp_path, capsys):
    """A malformed line refuses the file without --keep_going; with it the line is named and the others spoken."""
    units = tmp_path / "set.units"
    units.write_text("a 1 2 3 4\nb 1 x 3\n\nc 7 7 6 5\na 1 1\n")
    wavs = tmp_path / "wavs"
    argv = [units, "--model", vqvae[INV], "-o", wavs]
    rc, out, err = run(capsys, units_to_speech.main, "units-to-speech", argv)
    assert rc != 0 and not wavs.exists() and out == ""
    assert err[-1] == f"units-to-speech: error: {units}:2: unit 1 of 'b' is 'x', not an integer"
    rc, out, err = run(capsys, units_to_speech.main, "units-to-speech", [*argv, "--keep_going"])
    assert rc == 2 and sorted(p.name for p in wavs.iterdir()) == ["a.wav", "c.wav"]
    assert err[:2] == [f"units-to-speech: error: {units}:2: unit 1 of 'b' is 'x', not an integer",
                       f"units-to-speech: error: {units}:5: 'a' again (first at line 1)"]
    assert [line.split("\t")[0] for line in out.splitlines()] == [f"{wavs / 'a'}.wav", f"{wavs / 'c'}.wav"]
    units.write_text("b 1 x\n")  # nothing left to speak: every line named, exit 2, no wav
    rc, out, err = run(capsys, units_to_speech.main, "units-to-speech", [units, "--model", vqvae[INV], "-o",
                                                                         tmp_path / "none", "--keep_going"])
    assert rc == 2 and out == "" and err == [f"units-to-speech: error: {units}:1: unit 1 of 'b' is 'x', not an integer"]


def test_text_to_speech(tmp_path, capsys):
    from local_models.salad.pack import pack_system

    recipe = salad_recipe(tmp_path / "made")
    archive = pack_system(recipe, "M1/salad_sys", tmp_path / "salad.tar.gz")
    lines = tmp_path / "lines.txt"
    lines.write_text("Buenos días.\nEl precio sube un 5%.\nHola.\n", encoding="utf-8")
    wavs = tmp_path / "wavs"
    argv = ["--model", archive, "--text_file", lines, "-o", wavs]
    rc, out, err = run(capsys, text_to_speech.main, "text-to-speech", argv)
    assert rc == 2 and not wavs.exists() and out == "" and err[-1].startswith(f"text-to-speech: error: {lines}:2: ")
    rc, out, err = run(capsys, text_to_speech.main, "text-to-speech", [*argv, "--keep_going"])
    assert rc == 2 and sorted(p.name for p in wavs.iterdir()) == ["0001.wav", "0003.wav"]
    made = {f"{lines}:{n}": soundfile.info(wavs / f"{n:04d}.wav").duration for n in (1, 3)}
    assert all(s > 0.1 for s in made.values())
    check_stderr(err, "text-to-speech", [f"{lines}:{n}" for n in (1, 2, 3)], f"{lines}:2", made)  # RTF: speech made
    assert "cannot read" in err[1] and "'%'" in err[1]
    assert out.splitlines() == [f"{wavs / f'{n:04d}.wav'}\t{s:.2f} s" for n, s in zip((1, 3), made.values())]
    rc, out, err = run(capsys, text_to_speech.main, "text-to-speech",
                       ["--model", archive, "--text", "¿?", "-o", tmp_path / "x.wav", "--keep_going"])
    assert rc == 2 and out == "" and len(err) == 1 and err[0].startswith("text-to-speech: error: --text: ")
    assert not (tmp_path / "x.wav").exists()


def test_help_says_what_keep_going_writes(capsys):
    for mod in (speech_segments, speech_to_units, units_to_speech, text_to_speech):
        with pytest.raises(SystemExit):
            mod.main(["--help"])
        text = " ".join(capsys.readouterr().out.split())
        assert "--keep_going" in text and "exit status is 2" in text and "progress line" in text, mod.__name__
