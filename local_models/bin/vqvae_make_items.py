"""Write a ZeroSpeech ABX item file from phone alignments (CTM, e.g. a mini-corpus data dir's phones.ctm).

One item per phone token with a non-silence phone on both sides; by default an item spans the whole
triphone (ZeroSpeech within-context ABX), --span phone gives the middle phone's own times.
"""
import argparse
import sys

from local_models.common.datadir import DataDirError, read_table
from local_models.vqvae.items import DEFAULT_SILENCE, item_summary, items_from_ctm, write_item_file


def get_parser():
    p = argparse.ArgumentParser(prog="vqvae_make_items", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--ctm", required=True, help="phone alignments: <utt> <channel> <start_s> <dur_s> <phone>")
    p.add_argument("--utt2spk",
                   help="speaker of every utterance (default: utterance-id prefix up to the first '_' or '-')")
    p.add_argument("--span", choices=["triphone", "phone"], default="triphone")
    p.add_argument("--silence", default=",".join(sorted(DEFAULT_SILENCE)),
                   help="comma-separated silence/pause labels (default: %(default)s)")
    p.add_argument("--out", required=True, help="item file to write (atomically)")
    return p


def main(argv=None):
    args = get_parser().parse_args(argv)
    try:
        utt2spk = read_table(args.utt2spk) if args.utt2spk else None
        silence = {s for s in args.silence.split(",") if s}
        items = items_from_ctm(args.ctm, utt2spk, silence, args.span)
        if not items:
            raise ValueError(f"{args.ctm}: no phone has a non-silence phone on both sides: no items")
        write_item_file(args.out, items)
    except (DataDirError, ValueError, OSError) as e:
        print(f"vqvae_make_items: {e}", file=sys.stderr)
        return 1
    summary = item_summary(items)
    print("vqvae_make_items: " + ", ".join(f"{v} {k}" for k, v in summary.items()), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
