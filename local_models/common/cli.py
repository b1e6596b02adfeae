"""What every inference command shares (speech-segments, speech-to-text, text-to-speech, speech-to-units,
units-to-speech): the --model / --device options, one-line errors for a user's mistakes, atomic outputs."""
from __future__ import annotations

import argparse
import contextlib
import math
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterator, List, Optional, Sequence, Tuple, TypeVar

# the error classes alone, from a module that imports nothing heavy: `<command> --help` loads no numpy, soundfile,
# yaml or torch (tests/test_lean_help.py); what writes outputs imports them when it runs
from .errors import AudioError, DataDirError, EspeakUnavailable, PackError

if TYPE_CHECKING:
    import numpy as np

# a user's mistakes (bad file, bad archive, bad text, a missing espeak-ng): one line naming the input, no traceback
USER_ERRORS = (AudioError, PackError, DataDirError, FileNotFoundError, ValueError, KeyError, EspeakUnavailable)
# an output the system refuses (read-only place, a directory where a file goes): one line too
OUTPUT_ERRORS = (PermissionError, IsADirectoryError, NotADirectoryError)
AUDIO_SUFFIXES = (".wav", ".flac", ".ogg")
T = TypeVar("T")


def positive(kind: Callable = float) -> Callable[[str], object]:
    """argparse type: a finite KIND(value) > 0, else argparse's own 'argument --x: ...' error (exit 2)."""
    def parse(value: str):
        try:
            x = kind(value)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a valid {kind.__name__}: {value!r}") from None
        if not (x > 0 and (isinstance(x, int) or math.isfinite(x))):  # nan fails '> 0'; 'inf' would pass it
            raise argparse.ArgumentTypeError(f"must be a finite number > 0, got {value}")
        return x
    parse.__name__ = f"positive {kind.__name__}"
    return parse


def add_model_args(p: argparse.ArgumentParser, what: str, default: str = "") -> None:
    """--model (required unless DEFAULT says what is used without it), --device, --threads."""
    p.add_argument("--model", "-m", required=not default,
                   help=f"{what}: a packed archive (exp/<system>/packed/model.tar.gz of the recipe's pack stage), "
                        "an unpacked one, or the recipe's exp/<system> dir"
                        + (f" (default: {default})" if default else ""))
    p.add_argument("--device", default="cpu", help="torch device: cpu, cuda, cuda:1 (default: %(default)s)")
    p.add_argument("--threads", type=int, default=0, help="CPU threads for torch (0: torch's default)")


def set_threads(n: int) -> None:
    if n > 0:
        import torch

        torch.set_num_threads(n)


_results = None  # the real stdout while run_main runs a command (results()); None otherwise


def results():
    """Where a command's results go: stdout, even while run_main sends everything else printed there to stderr."""
    return _results or sys.stdout


def run_main(main: Callable[[Optional[Sequence[str]]], int], argv: Optional[Sequence[str]] = None,
             prog: Optional[str] = None) -> int:
    """MAIN(argv), with a user's mistakes reported as 'PROG: error: ...' (exit 2) instead of a traceback. What a
    library prints on stdout (ESPnet's "Failed to import Flash Attention" at import) goes to stderr, so that
    `command > out.txt` holds the results alone (printed to results()); --help stays on stdout."""
    global _results
    args = sys.argv[1:] if argv is None else list(argv)
    quiet = contextlib.nullcontext() if {"-h", "--help"} & set(args) else contextlib.redirect_stdout(sys.stderr)
    _results = sys.stdout
    try:
        with quiet:
            return main(argv) or 0
    except USER_ERRORS as e:
        print(error_line(prog, e, getattr(e, "input_name", None)), file=sys.stderr)
        return 2
    except OUTPUT_ERRORS as e:
        print(f"{prog or Path(sys.argv[0]).name}: error: {e.filename}: {e.strerror}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    finally:
        _results = None


def error_line(prog: Optional[str], e: BaseException, name: Optional[str] = None) -> str:
    """`PROG: error: <message>` of a user's mistake (a KeyError's message without its quotes), `NAME: ` before the
    message unless it names NAME already."""
    msg = str(e.args[0] if isinstance(e, KeyError) and e.args else e)
    if name is not None and str(name) not in msg:
        msg = f"{name}: {msg}"
    return f"{prog or Path(sys.argv[0]).name}: error: {msg}"


def add_keep_going_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--keep_going", action="store_true",
                   help="an input that fails (unreadable, silent, ...) is named in one line on stderr and skipped; "
                        "the others are processed and written; the exit status is then 2 (default: stop at the "
                        "first, writing nothing)")


def audio_seconds(path) -> Optional[float]:
    """Duration of an audio file from its header (None when it has none): the progress line's real-time factor."""
    import soundfile

    try:
        return soundfile.info(str(path)).duration
    except (RuntimeError, soundfile.LibsndfileError, OSError):
        return None


class InputLoop:
    """A command's inputs one at a time, with a progress line per input on stderr and --keep_going:

        loop = InputLoop(args.inputs, "speech-to-text", args.keep_going)
        for path, result in loop.run(lambda path: model(path)):
            ...                                  # write or keep RESULT
        return loop.exit_code                    # 2 if --keep_going skipped an input

    Progress: `[3/10] a.wav: 62.1 s in 3.05 s, RTF 0.049`: SECONDS(input, result) gives the seconds of audio the
    real-time factor divides by (default: the input file's duration; text-to-speech gives the seconds of
    speech it made); None, or TIMED False: `done in 3.05 s`. A user's mistake in an input (USER_ERRORS) stops the loop
    (run_main reports it as `PROG: error: <input>: <message>`) unless KEEP_GOING: then that line on stderr and the
    next input."""

    def __init__(self, inputs: Sequence[str], prog: str, keep_going: bool = False,
                 seconds: Optional[Callable[[str, T], Optional[float]]] = None, timed: bool = True):
        self.inputs, self.prog, self.keep_going = list(inputs), prog, keep_going
        self.seconds = (seconds or (lambda path, _result: audio_seconds(path))) if timed else None
        self.failed: List[str] = []

    def run(self, work: Callable[[str], T]) -> Iterator[Tuple[str, T]]:
        """(input, WORK(input)) of each input that succeeded, in order, as soon as it is done."""
        for i, path in enumerate(self.inputs, 1):
            t0 = time.perf_counter()
            try:
                result = work(path)
            except USER_ERRORS as e:
                if not self.keep_going:
                    e.input_name = path  # run_main's error line names the input, as --keep_going's does
                    raise
                print(error_line(self.prog, e, path), file=sys.stderr, flush=True)
                self.failed.append(path)
                continue
            took = time.perf_counter() - t0
            length = self.seconds(path, result) if self.seconds else None
            rate = f"{length:.1f} s in {took:.2f} s, RTF {took / length:.3f}" if length else f"done in {took:.2f} s"
            print(f"[{i}/{len(self.inputs)}] {path}: {rate}", file=sys.stderr, flush=True)
            yield path, result

    @property
    def exit_code(self) -> int:
        return 2 if self.failed else 0


def _check_writable_dir(d: Path, what: Path) -> None:
    """ValueError naming WHAT unless a file can be created in D (tried: a permission bit does not tell for root or
    a read-only mount)."""
    try:
        with tempfile.NamedTemporaryFile(dir=d, prefix=".probe."):
            pass
    except OSError as e:
        raise ValueError(f"{what}: cannot write in {d} ({e.strerror})") from None


def _check_creatable(path: Path) -> None:
    """ValueError naming PATH unless its missing directories can be made and written in: the nearest existing one
    above it must be a writable directory."""
    existing = path.parent
    while not existing.exists():
        existing = existing.parent
    if not existing.is_dir():
        raise ValueError(f"{path}: {existing} is not a directory")
    _check_writable_dir(existing, path)


def check_output_file(path, suffixes: Sequence[str] = ()) -> Path:
    """PATH as a file output ('-' is stdout; missing directories are made by the writer), checked before any work:
    one line naming it when it has the wrong suffix, is a directory, or cannot be written where it goes."""
    path = Path(path)
    if str(path) == "-":
        return path
    if suffixes and path.suffix.lower() not in suffixes:
        raise ValueError(f"{path}: output must end in {', '.join(suffixes)}")
    if path.is_dir():
        raise ValueError(f"{path}: is a directory; the output is a file")
    _check_creatable(path)
    return path


def check_output_dir(path) -> Path:
    """PATH as an output directory (made later, by the writer), checked before any work: one line naming it when it
    is a file or cannot be made and written in."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise ValueError(f"{path}: exists and is not a directory")
    _check_creatable(path / "x")
    return path


def write_wav(path, wave: np.ndarray, sample_rate: int) -> Path:
    """WAVE as 16-bit PCM at PATH (format from the suffix: .wav/.flac/.ogg), written atomically."""
    import numpy as np
    import soundfile

    from .datadir import atomic_open

    path = Path(path)
    fmt = {".wav": "WAV", ".flac": "FLAC", ".ogg": "OGG"}.get(path.suffix.lower())
    if fmt is None:
        raise ValueError(f"{path}: output must end in {', '.join(AUDIO_SUFFIXES)}")
    sub = "VORBIS" if fmt == "OGG" else "PCM_16"
    with atomic_open(path, "wb") as f:
        soundfile.write(f, np.clip(wave, -1.0, 1.0), sample_rate, format=fmt, subtype=sub)
    return path


def write_text(path, text: str) -> Path:
    """TEXT at PATH atomically ('-' is stdout)."""
    if str(path) == "-":
        results().write(text)
        return Path("-")
    from .datadir import atomic_open

    with atomic_open(path) as f:
        f.write(text)
    return Path(path)
