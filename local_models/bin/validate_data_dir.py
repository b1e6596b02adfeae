"""Check a Kaldi data dir; print every defect as `file:line: reason`; exit 1 if any."""
import argparse
import sys

from local_models.common.validate import validate_data_dir


def get_parser():
    p = argparse.ArgumentParser(
        prog="validate_data_dir",
        description="Check a Kaldi-style data dir (wav.scp, text, utt2spk, spk2utt, segments, feats.scp, "
        "utt2lid, utt2dur, utt2num_frames, durations): C-locale sorting, unique keys, consistent key sets, "
        "segments with 4 fields and end > start, readable audio, utterance ids prefixed by speaker, "
        "non-empty transcripts. Every defect is printed with file, line and reason.",
    )
    p.add_argument("data_dir")
    p.add_argument("--no-text", action="store_true", help="do not require/check `text`")
    p.add_argument("--no-feats", action="store_true", help="do not check feats.scp")
    p.add_argument("--no-wav", action="store_true", help="do not check that audio files exist")
    p.add_argument("--sample-rate", type=int, default=None, help="also check every wav file has this rate (Hz)")
    p.add_argument("--max-report", type=int, default=50, help="print at most this many defects (default 50)")
    return p


def main(argv=None):
    args = get_parser().parse_args(argv)
    defects = validate_data_dir(
        args.data_dir,
        check_text=not args.no_text,
        check_feats=not args.no_feats,
        check_wav=not args.no_wav,
        sample_rate=args.sample_rate,
    )
    for d in defects[: args.max_report]:
        print(d, file=sys.stderr)
    if len(defects) > args.max_report:
        print(f"... and {len(defects) - args.max_report} more defects", file=sys.stderr)
    if defects:
        print(f"validate_data_dir: {args.data_dir}: {len(defects)} defect(s); "
              "fix_data_dir repairs key mismatches and sorting", file=sys.stderr)
        return 1
    print(f"validate_data_dir: {args.data_dir} is OK", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
