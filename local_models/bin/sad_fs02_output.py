"""Write the FS02 challenge's SAD system-output files of decoded sets (any set, with or without a reference)."""
import argparse
import sys

from local_models.common.datadir import DataDirError
from local_models.sad import fs02


def get_parser():
    p = argparse.ArgumentParser(
        prog="sad_fs02_output",
        description="For every DECODE_DIR (sad_decode + sad_segments: hyp.rttm, reco2dur), write DECODE_DIR/fs02/<rec>.txt: "
        "one file per recording in the FS02 scoring toolkit's system-output format (9 tab-separated columns "
        "'X X X SAD <rec> <start> <end> speech|non-speech 0.500000', intervals covering the recording from 0 to "
        "its end), ready for the toolkit's scoreFS02_SAD.sh or a challenge submission's Dev/ and Eval/ folders.",
    )
    p.add_argument("decode_dirs", nargs="+")
    return p


def main(argv=None):
    args = get_parser().parse_args(argv)
    try:
        for d in args.decode_dirs:
            n = fs02.export_decode_dir(d)
            print(f"sad_fs02_output: {d}/fs02: {n} files", file=sys.stderr)
    except (DataDirError, OSError) as e:
        print(f"sad_fs02_output: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
