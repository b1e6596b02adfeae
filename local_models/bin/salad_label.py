"""Give every utterance of a data dir full-context labels with phone times (run.sh stage 2).

Utterances already in DATA_DIR/lab.scp keep their labels (--force relabels all). The others get labels from the
Spanish front end with phone times from an espeak-ng rendition of their transcript, DTW-aligned to the recording
(local_models.salad.align). Writes DATA_DIR/lab/<utt>.lab and rewrites DATA_DIR/lab.scp, and reports how many
front-end phones matched espeak's (a low rate means text the front end reads differently from espeak).
"""
import argparse
import multiprocessing
import sys
from pathlib import Path

from local_models.common.datadir import DataDirError, iter_lines, read_table, write_table

SAMPLE_RATE = 16000


def get_parser():
    p = argparse.ArgumentParser(prog="salad_label", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--nj", type=int, default=1)
    p.add_argument("--force", action="store_true", help="relabel utterances that have labels")
    p.add_argument("data_dir")
    return p


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


def main(argv=None):
    args = get_parser().parse_args(argv)
    d = Path(args.data_dir)
    try:
        wavs = read_table(d / "wav.scp")
        text = read_text(d)
        missing = sorted(set(wavs) - set(text))
        if missing:
            raise DataDirError(d / "text", None, f"no transcript for '{missing[0]}' ({len(missing)} utterance(s))")
        labs = {} if args.force or not (d / "lab.scp").is_file() else read_table(d / "lab.scp")
        labs = {u: p for u, p in labs.items() if u in wavs}
        todo = sorted(set(wavs) - set(labs), key=str.encode)
        if not todo:
            print(f"salad_label: {d}: all {len(wavs)} utterances have labels")
            return
        (d / "lab").mkdir(exist_ok=True)
        jobs = [(u, wavs[u], text[u], d.absolute() / "lab" / f"{u}.lab") for u in todo]
        from tqdm import tqdm

        with multiprocessing.get_context("fork").Pool(max(1, args.nj)) as pool:
            res = list(tqdm(pool.imap(_label, jobs), total=len(jobs), desc="salad_label", mininterval=5,
                            disable=None))
    except (DataDirError, FileNotFoundError, RuntimeError, ValueError) as e:
        sys.exit(f"salad_label: {e}")
    for utt, _, _ in res:
        labs[utt] = str(d.absolute() / "lab" / f"{utt}.lab")
    write_table(d / "lab.scp", labs)
    matched, total = sum(r[1] for r in res), sum(r[2] for r in res)
    print(f"salad_label: {d}: {len(res)} utterances labelled through espeak-ng + DTW; front-end phones matched "
          f"to espeak's: {100 * matched / max(total, 1):.1f} %")


if __name__ == "__main__":
    main()
