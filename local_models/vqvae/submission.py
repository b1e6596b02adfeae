"""The ZeroSpeech 2019 track's submission directory (as the ZeroSpeech 2020 challenge takes it), written and checked.

Layout (the published validator: github.com/zerospeech/zerospeech2020, zerospeech2020/validation/
{submission_2020,submission_2019,utils}.py and read_2019_features.py; file lists in share/2019/<language>/):

    metadata.yaml              author (str), affiliation (str), open source (bool); no other entry
    2019/metadata.yaml         abx distance (dtw_cosine | dtw_kl | levenshtein), system description (str),
                               using parallel train (bool), using external data (bool), auxiliary1/2 description
                               (str; required when the auxiliary_embedding1/2 directories are there)
    2019/code/                 the code: non-empty when open source, absent or empty otherwise
    2019/<language>/test/      <utt>.txt per test utterance: one frame a line, space-separated numbers, the same
                               count on every line and in every file; <voice>_<id>.wav per synthesis.txt line
                               (`test/S002_0379088085 V002` -> V002_0379088085.wav), readable and not empty
    2019/<language>/auxiliary_embedding{1,2}/   optional, the same .txt files (both languages or neither)

Languages: the challenge's are english and surprise; the validator here checks the languages it is given (the
recipe has english only; `languages=("english", "surprise")` is the official check). Nothing else may sit at the
top level or in 2019/.

Units: each frame's code is written as its codebook embedding (default; what the paper's ABX compares, with
`abx distance: dtw_cosine`) or as a one-hot vector; either way the bitrate the challenge computes (distinct lines
as symbols) is the codes' own.
"""
from __future__ import annotations

import shutil
import wave
from pathlib import Path
from typing import Dict, Iterable, List, Mapping, Optional, Sequence

import numpy as np
import yaml

ROOT_ENTRIES = {"author": str, "affiliation": str, "open source": bool}
TRACK_ENTRIES = {"abx distance": str, "system description": str, "using parallel train": bool,
                 "using external data": bool}
AUX_ENTRIES = ("auxiliary1 description", "auxiliary2 description")
ABX_DISTANCES = ("dtw_cosine", "dtw_kl", "levenshtein")
LANGUAGES = ("english", "surprise")
AUX_DIRS = ("auxiliary_embedding1", "auxiliary_embedding2")


class SubmissionError(ValueError):
    """What is wrong with a submission directory: every defect found, one a line, each naming its file."""

    def __init__(self, root, errors: Sequence[str]):
        self.errors = list(errors)
        more = f"\n  ... and {len(self.errors) - 20} more" if len(self.errors) > 20 else ""
        shown = "\n  ".join(self.errors[:20]) + more
        super().__init__(f"{root}: not a valid ZeroSpeech 2019 submission ({len(self.errors)} errors):\n  {shown}")


# ----------------------------------------------------------------------------- names
def synthesis_names(synthesis: Mapping[str, str]) -> Dict[str, str]:
    """{test utt: wav file name} of a synthesis list ({utt: voice}): `<voice>_<id>.wav` with id the utterance id
    after its speaker prefix (the challenge's names: S002_0379088085 in V002 -> V002_0379088085.wav). Where two
    lines would get one name (ids that are only unique within a speaker, as the mini corpus's T01_0001 / T02_0001),
    every file is named `<voice>_<utt>.wav` instead."""
    def official(utt, voice):
        return f"{voice}_{utt.partition('_')[2] or utt}.wav"

    names = {u: official(u, v) for u, v in synthesis.items()}
    if len(set(names.values())) < len(names):
        names = {u: f"{v}_{u}.wav" for u, v in synthesis.items()}
    return names


def frame_lines(codes: np.ndarray, codebook: Optional[np.ndarray], num_codes: Optional[int]) -> str:
    """One line per frame: the code's embedding (codebook) or its one-hot vector (num_codes)."""
    codes = np.asarray(codes).reshape(-1).astype(np.int64)
    if codes.size == 0:
        raise ValueError("no frames")
    if codebook is not None:
        rows = [" ".join(f"{x:.6g}" for x in row) for row in np.asarray(codebook, dtype=np.float64)]
    else:
        rows = [" ".join("1" if j == i else "0" for j in range(num_codes)) for i in range(num_codes)]
    if codes.min() < 0 or codes.max() >= len(rows):
        raise ValueError(f"codes must lie in [0, {len(rows)}), got {codes.min()}..{codes.max()}")
    return "".join(rows[c] + "\n" for c in codes)


# ----------------------------------------------------------------------------- writing
def write_submission(out, codes: Mapping[str, np.ndarray], wavs: Mapping[str, Path], synthesis: Mapping[str, str],
                     root_meta: Mapping, track_meta: Mapping, code_files: Iterable[Path] = (),
                     codebook: Optional[np.ndarray] = None, num_codes: Optional[int] = None,
                     language: str = "english") -> Path:
    """Write OUT (replaced whole, built aside first): codes {utt: (T,) int} -> <utt>.txt, the synthesised
    wavs {utt: path} of every synthesis-list utterance -> <voice>_<id>.wav, both metadata files, code/ (a copy of
    code_files, flat by name). Validates the result before it replaces OUT; returns OUT."""
    out = Path(out)
    if (codebook is None) == (num_codes is None):
        raise ValueError("give the codebook (embeddings) or num_codes (one-hot), one of them")
    missing = sorted(set(synthesis) - set(wavs))
    if missing:
        raise ValueError(f"{len(missing)} synthesis-list utterance(s) have no synthesised wav, e.g. {missing[0]}")
    tmp = out.with_name(out.name + ".building")
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        _build(tmp, codes, wavs, synthesis, root_meta, track_meta, code_files, codebook, num_codes, language)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)  # nothing half-written stays behind
        raise
    shutil.rmtree(out, ignore_errors=True)
    tmp.rename(out)
    return out


def _build(tmp: Path, codes, wavs, synthesis, root_meta, track_meta, code_files, codebook, num_codes,
           language) -> None:
    """write_submission's tree in TMP, validated."""
    test = tmp / "2019" / language / "test"
    test.mkdir(parents=True)
    _write_yaml(tmp / "metadata.yaml", root_meta)
    _write_yaml(tmp / "2019" / "metadata.yaml", track_meta)
    code = tmp / "2019" / "code"
    code.mkdir()
    for f in code_files:
        shutil.copy2(f, code / Path(f).name)
    for utt, c in codes.items():
        try:
            (test / f"{utt}.txt").write_text(frame_lines(c, codebook, num_codes))
        except ValueError as e:
            raise ValueError(f"codes of {utt}: {e}") from None
    for utt, name in synthesis_names(synthesis).items():
        shutil.copyfile(wavs[utt], test / name)
    validate_submission(tmp, {language: (list(codes), synthesis)})


def _write_yaml(path: Path, entries: Mapping) -> None:
    path.write_text(yaml.safe_dump(dict(entries), sort_keys=False, allow_unicode=True))


# ----------------------------------------------------------------------------- checking
def validate_submission(root, expected: Mapping[str, tuple]) -> None:
    """Check ROOT against the layout above; raise SubmissionError listing every defect found.

    expected: {language: (test utterance ids, {utt: voice} of its synthesis list)}, e.g. from the recipe's
    data/test (wav.scp, synthesis_list) or the challenge's file lists."""
    root, errors = Path(root), []
    if not root.is_dir():
        raise SubmissionError(root, [f"{root}: not a directory"])
    _check_entries(root, "top level", {"metadata.yaml", "2019"}, {"2017"}, errors)
    meta = _check_yaml(root / "metadata.yaml", ROOT_ENTRIES, {}, errors)
    track = root / "2019"
    if not track.is_dir():
        raise SubmissionError(root, errors)
    open_source = meta.get("open source") is True
    _check_entries(track, "2019/", {"metadata.yaml", *expected} | ({"code"} if open_source else set()),
                   {"code"}, errors)
    aux = [_aux_present(track, name, expected, errors) for name in AUX_DIRS]
    if aux[1] and not aux[0]:
        errors.append(f"{track}: auxiliary_embedding2 without auxiliary_embedding1")
    required = dict(TRACK_ENTRIES, **{AUX_ENTRIES[i]: str for i in range(2) if aux[i]})
    optional = {AUX_ENTRIES[i]: str for i in range(2) if not aux[i]}
    track_meta = _check_yaml(track / "metadata.yaml", required, optional, errors)
    if "abx distance" in track_meta and track_meta["abx distance"] not in ABX_DISTANCES:
        errors.append(f"{track / 'metadata.yaml'}: 'abx distance' is '{track_meta['abx distance']}', "
                      f"must be one of {', '.join(ABX_DISTANCES)}")
    _check_code(track / "code", open_source, errors)
    for language, (utts, synthesis) in expected.items():
        if language not in LANGUAGES:
            raise ValueError(f"language '{language}' is not one of {', '.join(LANGUAGES)}")
        lang = track / language
        if not lang.is_dir():
            continue  # already reported by _check_entries
        dims: Dict[int, str] = {}
        _check_frames_dir(lang / "test", utts, dims, errors)
        _check_wavs(lang / "test", synthesis_names(synthesis).values(), errors)
        for i, name in enumerate(AUX_DIRS):
            if aux[i]:
                _check_frames_dir(lang / name, utts, {}, errors)
    if errors:
        raise SubmissionError(root, errors)


def _check_entries(directory: Path, what: str, required: set, optional: set, errors: List[str]) -> None:
    if not directory.is_dir():
        errors.append(f"{directory}: {what} directory missing")
        return
    have = {p.name for p in directory.iterdir()}
    for name in sorted(required - have):
        errors.append(f"{directory / name}: missing ({what} needs {', '.join(sorted(required))})")
    for name in sorted(have - required - optional):
        errors.append(f"{directory / name}: not allowed in the {what} directory")


def _check_yaml(path: Path, required: Mapping[str, type], optional: Mapping[str, type], errors: List[str]) -> dict:
    if not path.is_file():
        return {}  # reported as missing by _check_entries
    try:
        meta = yaml.safe_load(path.read_text())
    except yaml.YAMLError as e:
        errors.append(f"{path}: not YAML ({e})")
        return {}
    if not isinstance(meta, dict) or not meta:
        errors.append(f"{path}: must be a YAML mapping of entries, got {type(meta).__name__}")
        return {}
    kinds = {**required, **optional}
    for key in required:
        if key not in meta:
            errors.append(f"{path}: entry '{key}' missing")
    for key, value in meta.items():
        if key not in kinds:
            errors.append(f"{path}: entry '{key}' is not allowed (entries: {', '.join(kinds)})")
        elif value is None or not isinstance(value, kinds[key]):
            errors.append(f"{path}: entry '{key}' must be a {kinds[key].__name__}, got {value!r}")
    return meta


def _aux_present(track: Path, name: str, expected: Mapping, errors: List[str]) -> bool:
    present = [(track / lang / name).is_dir() for lang in expected]
    if any(present) and not all(present):
        errors.append(f"{track}: {name} is there for some languages but not all of {', '.join(expected)}")
    return any(present)


def _check_code(code: Path, open_source: bool, errors: List[str]) -> None:
    has_code = code.is_dir() and any(code.iterdir())
    if open_source and not has_code:
        errors.append(f"{code}: 'open source' is true but the code directory is missing or empty")
    if not open_source and has_code:
        errors.append(f"{code}: 'open source' is false but the code directory is not empty")


def _check_frames_dir(directory: Path, utts: Iterable[str], dims: Dict[int, str], errors: List[str]) -> None:
    if not directory.is_dir():
        errors.append(f"{directory}: directory missing")
        return
    for utt in utts:
        path = directory / f"{utt}.txt"
        if not path.is_file():
            errors.append(f"{path}: missing (one .txt per test utterance)")
            continue
        error, dim = _frames_error(path)
        if error:
            errors.append(error)
        elif dims and dim not in dims:
            errors.append(f"{path}: {dim} numbers a line, {next(iter(dims.values()))} has {next(iter(dims))}")
        else:
            dims.setdefault(dim, str(path))


def _frames_error(path: Path):
    """(error or None, numbers per line) of one features file, as read_2019_features reads it."""
    dim = None
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        return f"{path}: not UTF-8 text", None
    for n, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        fields = line.split(" ")
        if dim is None:
            dim = len(fields)
        if len(fields) != dim:
            return f"{path}:{n}: {len(fields)} numbers, the lines above have {dim}", None
        try:
            [float(x) for x in fields]
        except ValueError:
            return f"{path}:{n}: not space-separated numbers: '{line[:60]}'", None
    if dim is None:
        return f"{path}: empty (no frame)", None
    return None, dim


def _check_wavs(directory: Path, names: Iterable[str], errors: List[str]) -> None:
    for name in names:
        path = directory / name
        if not path.is_file():
            errors.append(f"{path}: missing (a synthesis.txt line asks for it)")
            continue
        try:
            with wave.open(str(path), "rb") as w:
                if w.getnframes() == 0:
                    errors.append(f"{path}: empty wav")
        except (wave.Error, EOFError) as e:
            errors.append(f"{path}: not a readable wav ({e})")
