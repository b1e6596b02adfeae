"""Give every utterance of one or more data dirs full-context labels with phone times (run.sh stage 2; several data
dirs in one process save its start-up, seconds of imports, per set).

Utterances already in DATA_DIR/lab.scp keep their labels (--force relabels all). The others get labels from the
Spanish front end with phone times from an espeak-ng rendition of their transcript, DTW-aligned to the recording
(local_models.salad.align). Writes DATA_DIR/lab/<utt>.lab and rewrites DATA_DIR/lab.scp, and reports how many
front-end phones matched espeak's (a low rate means text the front end reads differently from espeak).
"""
import argparse
import sys
from pathlib import Path

from local_models.common.datadir import DataDirError
from local_models.salad.labelling import label_utterances, write_scp


def get_parser():
    p = argparse.ArgumentParser(prog="salad_label", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--nj", type=int, default=1)
    p.add_argument("--force", action="store_true", help="relabel utterances that have labels")
    p.add_argument("data_dir", nargs="+")
    return p


def main(argv=None):
    args = get_parser().parse_args(argv)
    for d in map(Path, args.data_dir):
        label_dir(d, args.nj, args.force)


def label_dir(d: Path, nj: int, force: bool):
    try:
        labelled = label_utterances(d, nj, force)
    except (DataDirError, FileNotFoundError, RuntimeError, ValueError) as e:
        sys.exit(f"salad_label: {e}")
    if not labelled.results:
        print(f"salad_label: {d}: all {labelled.utterances} utterances have labels")
        return
    matched, total = write_scp(d, labelled)
    print(f"salad_label: {d}: {len(labelled.results)} utterances labelled through espeak-ng + DTW; front-end "
          f"phones matched to espeak's: {100 * matched / max(total, 1):.1f} %")


if __name__ == "__main__":
    main()
