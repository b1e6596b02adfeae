"""The inference commands' outputs (local_models/common/cli.py): a wrong or unwritable output path is one line
before any work, results alone on stdout (a library's import-time message goes to stderr), --help on stdout."""
import os
import sys

import pytest

from local_models.bin import speech_segments, text_to_speech, units_to_speech
from local_models.common.cli import InputLoop, check_output_dir, check_output_file, results, run_main

as_root = pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root writes in read-only dirs")


def test_check_output_file(tmp_path):
    assert check_output_file(tmp_path / "a.wav", (".wav",)) == tmp_path / "a.wav"
    assert str(check_output_file("-")) == "-"
    with pytest.raises(ValueError, match=r"x.mp3: output must end in .wav"):
        check_output_file(tmp_path / "x.mp3", (".wav", ".flac"))
    with pytest.raises(ValueError, match="is a directory"):
        check_output_file(tmp_path)
    assert check_output_file(tmp_path / "missing" / "out.rttm")  # the writer makes the directory
    assert list(tmp_path.iterdir()) == []  # nothing made yet; the write probe leaves nothing
    (tmp_path / "f.txt").write_text("x")
    with pytest.raises(ValueError, match="f.txt is not a directory"):
        check_output_file(tmp_path / "f.txt" / "sub" / "out.rttm")


def test_check_output_dir(tmp_path):
    assert check_output_dir(tmp_path / "new" / "deeper") == tmp_path / "new" / "deeper"
    assert not (tmp_path / "new").exists()  # made by the writer, later
    (tmp_path / "f.txt").write_text("x")
    with pytest.raises(ValueError, match="f.txt: exists and is not a directory"):
        check_output_dir(tmp_path / "f.txt")
    with pytest.raises(ValueError, match="f.txt is not a directory"):
        check_output_dir(tmp_path / "f.txt" / "sub")


@as_root
def test_read_only_directory(tmp_path):
    ro = tmp_path / "ro"
    ro.mkdir(mode=0o500)
    with pytest.raises(ValueError, match="cannot write in"):
        check_output_file(ro / "out.txt")
    with pytest.raises(ValueError, match="cannot write in"):
        check_output_dir(ro / "wavs")


def test_library_stdout_goes_to_stderr_results_stay(capsys):
    def main(argv):
        print("Failed to import Flash Attention, using ESPnet default")  # what ESPnet prints at import
        print("rec1 0.00 1.50", file=results())
        return 0
    assert run_main(main, [], prog="tool") == 0
    out, err = capsys.readouterr()
    assert out == "rec1 0.00 1.50\n" and "Flash Attention" in err
    assert results() is sys.stdout  # restored


def test_help_stays_on_stdout(capsys):
    with pytest.raises(SystemExit):
        run_main(speech_segments.main, ["--help"], prog="speech-segments")
    assert "usage: speech-segments" in capsys.readouterr().out


def test_os_errors_are_one_line(capsys):
    def main(argv):
        raise PermissionError(13, "Permission denied", "/ro/out.wav")
    assert run_main(main, [], prog="tool") == 2
    assert capsys.readouterr().err == "tool: error: /ro/out.wav: Permission denied\n"


def test_commands_refuse_a_bad_output_before_loading_the_model(tmp_path, capsys):
    """The model path does not exist: each refusal below comes from the output check, which runs first."""
    audio, model = tmp_path / "a.wav", tmp_path / "no_model.tar.gz"
    assert run_main(speech_segments.main, [str(audio), "-m", str(model), "--rttm", str(tmp_path)], "s") == 2
    assert capsys.readouterr().err == f"s: error: {tmp_path}: is a directory; the output is a file\n"
    assert run_main(units_to_speech.main, ["u.txt", "-m", str(model), "-o", str(tmp_path / "x.mp3")], "u") == 2
    assert "x.mp3: output must end in .wav, .flac, .ogg, or name a directory" in capsys.readouterr().err
    assert not (tmp_path / "x.mp3").exists()
    assert run_main(text_to_speech.main, ["-m", str(model), "--text", "hola", "-o", str(tmp_path / "o.mp3")], "t") == 2
    assert "o.mp3: output must end in .wav, .flac, .ogg" in capsys.readouterr().err
    empty = tmp_path / "empty.txt"
    empty.write_text("\n  \n")
    assert run_main(text_to_speech.main, ["-m", str(model), "--text_file", str(empty), "-o", str(tmp_path / "w")],
                    "t") == 2
    assert f"{empty}: no text in it" in capsys.readouterr().err


def test_input_loop_progress_and_keep_going(capsys):
    """One progress line per input done; a user's mistake stops the loop, or with keep_going is one line naming the
    input and the loop goes on (exit code 2 at the end); a programming error is never swallowed."""
    def work(name):
        if name == "bad.wav":
            raise ValueError("bad.wav: cannot read audio")
        if name == "odd.wav":
            raise KeyError("no such speaker")  # a message that does not name the input: it is put before it
        return name.upper()

    loop = InputLoop(["a.wav", "bad.wav", "c.wav", "odd.wav"], "tool", keep_going=True,
                     seconds=lambda p, r: 2.0 if r == "A.WAV" else None)
    assert list(loop.run(work)) == [("a.wav", "A.WAV"), ("c.wav", "C.WAV")]
    assert loop.failed == ["bad.wav", "odd.wav"] and loop.exit_code == 2
    lines = capsys.readouterr().err.splitlines()
    assert lines[1] == "tool: error: bad.wav: cannot read audio" and len(lines) == 4
    assert lines[3] == "tool: error: odd.wav: no such speaker"
    assert lines[0].startswith("[1/4] a.wav: 2.0 s in ") and " RTF " in lines[0]
    assert lines[2].startswith("[3/4] c.wav: done in ")
    loop = InputLoop(["a.wav", "bad.wav", "c.wav"], "tool", timed=False)
    got = []
    with pytest.raises(ValueError, match="bad.wav"):
        for item in loop.run(work):
            got.append(item)
    assert got == [("a.wav", "A.WAV")] and capsys.readouterr().err.startswith("[1/3] a.wav: done in ")

    def stops_at_odd(argv):  # without keep_going too, the error line names the input its message does not name
        for _ in InputLoop(["a.wav", "odd.wav", "c.wav"], "tool", timed=False).run(work):
            pass
    assert run_main(stops_at_odd, [], prog="tool") == 2
    assert capsys.readouterr().err.splitlines()[1:] == ["tool: error: odd.wav: no such speaker"]
    loop = InputLoop(["a.wav"], "tool", keep_going=True)
    with pytest.raises(ZeroDivisionError):
        list(loop.run(lambda name: 1 / 0))
    assert InputLoop([], "tool").exit_code == 0
