#!/usr/bin/env python3
"""Write Kaldi data dirs from a KSS-layout corpus (the real KSS or the mini corpus of make_mini_corpus.py).

CORPUS holds transcript.v.1.x.txt (lines `1/1_0000.wav|original|expanded|decomposed|duration|english`) and
the wavs it names (relative to CORPUS or CORPUS/kss). Default: the paper's split in transcript order, the
last --dev + --test utterances held out (dev first, then test), the rest = train -> OUT/{train,dev,test}.
--single-set NAME puts every utterance into OUT/NAME instead. Text = the expanded column (--column).
Audio at another rate than --sample-rate is resampled by a sox pipe in wav.scp. --phones-ctm (mini corpus)
copies each utterance's true phone times into OUT/<set>/phones.ctm. --ood-text FILE also writes the
text-only set OUT/ood (one sentence per line; blank lines and lines starting with '#' skipped).
Errors name the transcript file and line.
"""
import argparse
import sys
from pathlib import Path

from local_models.common.dirops import held_out_count
from local_models.jdit import data


def get_parser():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--transcript", help="transcript file (default: the one transcript.v.1.*.txt in CORPUS)")
    p.add_argument("--column", default="expanded", choices=["original", "expanded", "decomposed"],
                   help="transcript column used as text (default: %(default)s)")
    p.add_argument("--dev", default="200", help="held-out dev utterances: a count or a share like 5%% (default: %(default)s)")
    p.add_argument("--test", default="50", help="held-out test utterances, after dev (default: %(default)s)")
    p.add_argument("--single-set", metavar="NAME", help="write every utterance into OUT/NAME (no split)")
    p.add_argument("--sample-rate", type=int, default=data.SAMPLE_RATE, help="target rate in Hz (default: %(default)s)")
    p.add_argument("--phones-ctm", help="CTM keyed by wav file stem with the true phone times (mini corpus)")
    p.add_argument("--ood-text", help="also write OUT/ood: text-only, one sentence per line of this file")
    p.add_argument("corpus", metavar="CORPUS")
    p.add_argument("out", metavar="OUT", help="parent of the data dirs (e.g. data)")
    return p


def main(argv=None):
    args = get_parser().parse_args(argv)
    try:
        transcript = Path(args.transcript) if args.transcript else data.find_transcript(args.corpus)
        entries = data.read_transcript(transcript, args.corpus, column=args.column)
        ctm = data.read_ctm(args.phones_ctm) if args.phones_ctm else None
        if args.single_set:
            sets = {args.single_set: entries}
        else:
            n_dev = held_out_count(args.dev, len(entries))
            n_test = held_out_count(args.test, len(entries))
            sets = data.split_held_out(entries, n_dev, n_test)
        for name, subset in sets.items():
            if not subset:
                print(f"prepare_kss: {name} would be empty; not written", file=sys.stderr)
                continue
            data.write_set(args.out, name, subset, args.sample_rate, ctm)
        if args.ood_text:
            data.write_text_set(args.out, "ood", data.read_sentences(args.ood_text))
    except (ValueError, OSError) as e:
        print(f"prepare_kss: error: {e}", file=sys.stderr)
        return 1
    rates = sorted({e.sample_rate for e in entries})
    summary = ", ".join(f"{name} {len(subset)}" for name, subset in sets.items())
    print(f"prepare_kss: {transcript}: {len(entries)} utterances ({summary}), {sum(e.duration for e in entries) / 3600:.2f} h, "
          f"audio at {'/'.join(map(str, rates))} Hz -> {args.out} (wav.scp at {args.sample_rate} Hz)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
