"""MCD (DTW) / log-F0 RMSE / V/UV error of several decode dirs against one reference, in one process: for each
DECODE_DIR, what `mcd_score --ref REF --hyp DECODE_DIR/wav.scp --sample-rate HZ --json DECODE_DIR/mcd.json
--per-utt DECODE_DIR/mcd_per_utt.tsv` writes, with mcd_score's default analysis (egs/kss/tts1 stage 6).

    python -m local_models.bin.jdit_mcd --ref data/test/wav.scp --sample-rate 16000 exp/gt_mel/decode_test \\
        exp/tts_jdit/decode_test
"""
import argparse
import sys

from local_models.common.cli import run_main
from local_models.common.datadir import DataDirError
from local_models.common.mcd import add_f0_method_arg
from local_models.jdit.metrics import score_decode_dirs


def get_parser():
    p = argparse.ArgumentParser(prog="jdit_mcd", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--ref", required=True, help="reference wav.scp (or directory of <utt>.wav)")
    p.add_argument("--sample-rate", type=int, default=None, help="resample both sides to this rate first")
    add_f0_method_arg(p)
    p.add_argument("--skip-up-to-date", action="store_true",
                   help="leave a DECODE_DIR whose mcd.json is newer than its wav.scp and has this analysis (rate, F0)")
    p.add_argument("decode_dirs", nargs="+", metavar="DECODE_DIR", help="dirs with wav.scp (jdit_synth's output)")
    return p


def main(argv=None) -> int:
    args = get_parser().parse_args(argv)
    try:
        score_decode_dirs(args.ref, args.decode_dirs, args.sample_rate, args.f0_method, args.skip_up_to_date)
    except (DataDirError, OSError) as e:
        raise ValueError(str(e)) from None
    return 0


if __name__ == "__main__":
    sys.exit(run_main(main, prog="jdit_mcd"))
