"""Full-context labels with phone times for every utterance of a data dir (run.sh stage 2,
`local_models.bin.salad_label`).

Utterances already in DATA_DIR/lab.scp keep their labels unless `force`. The others get labels from the Spanish
front end with phone times from an espeak-ng rendition of their transcript, DTW-aligned to the recording (align.py).

    label_utterances(data_dir, nj, force) -> Labelled     writes DATA_DIR/lab/<utt>.lab
    write_scp(data_dir, labelled) -> (matched, total)     rewrites DATA_DIR/lab.scp
"""
import multiprocessing
from pathlib import Path
from typing import Dict, List, NamedTuple, Tuple

from local_models.common.datadir import DataDirError, iter_lines, read_table, write_table

SAMPLE_RATE = 16000


class Labelled(NamedTuple):
    utterances: int  # in wav.scp
    labs: Dict[str, str]  # utt -> .lab path of the utterances that kept their labels
    results: List[Tuple[str, int, int]]  # (utt, front-end phones matched to espeak's, front-end phones) per new .lab


def read_text(data_dir: Path) -> dict:
    """utt -> transcript; an empty transcript is an error naming its line."""
    path = data_dir / "text"
    if not path.is_file():
        raise DataDirError(path, None, "missing: labels are made from the transcripts")
    text = {}
    for n, line in iter_lines(path):
        parts = line.split(maxsplit=1)
        if len(parts) < 2 or not parts[1].strip():
            raise DataDirError(path, n, f"empty transcript for '{parts[0]}'")
        text[parts[0]] = parts[1].strip()
    return text


def _label(job):
    from local_models.common.audio import load_audio
    from local_models.salad import align, frontend

    utt, entry, text, out = job
    try:
        wave, _ = load_audio(entry, SAMPLE_RATE)
        lines, matched, total = align.label_recording(text, wave, SAMPLE_RATE)
    except Exception as e:
        raise RuntimeError(f"utterance '{utt}' ({text!r}): {e}") from e
    frontend.write_lab(out, lines)
    return utt, matched, total


def label_utterances(d: Path, nj: int, force: bool) -> Labelled:
    """Label (in `nj` processes) the utterances of `d` that have no labels yet, or all of them when `force`."""
    wavs = read_table(d / "wav.scp")
    text = read_text(d)
    missing = sorted(set(wavs) - set(text))
    if missing:
        raise DataDirError(d / "text", None, f"no transcript for '{missing[0]}' ({len(missing)} utterance(s))")
    labs = {} if force or not (d / "lab.scp").is_file() else read_table(d / "lab.scp")
    labs = {u: p for u, p in labs.items() if u in wavs}
    todo = sorted(set(wavs) - set(labs), key=str.encode)
    if not todo:
        return Labelled(len(wavs), labs, [])
    (d / "lab").mkdir(exist_ok=True)
    jobs = [(u, wavs[u], text[u], d.absolute() / "lab" / f"{u}.lab") for u in todo]
    from tqdm import tqdm

    with multiprocessing.get_context("fork").Pool(max(1, nj)) as pool:
        res = list(tqdm(pool.imap(_label, jobs), total=len(jobs), desc="salad_label", mininterval=5, disable=None))
    return Labelled(len(wavs), labs, res)


def write_scp(d: Path, labelled: Labelled) -> Tuple[int, int]:
    """Rewrite DATA_DIR/lab.scp with the kept and the new labels; (matched, total) front-end phones of the new."""
    labs = dict(labelled.labs)
    for utt, _, _ in labelled.results:
        labs[utt] = str(d.absolute() / "lab" / f"{utt}.lab")
    write_table(d / "lab.scp", labs)
    return sum(r[1] for r in labelled.results), sum(r[2] for r in labelled.results)
