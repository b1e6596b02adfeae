"""ZeroSpeech 2019 track submission directory (the ZeroSpeech 2020 layout): write one from a recipe run, or check one.

  write:    codes of the test set (vqvae_extract's OUT_DIR: codes/<utt>.npy, codebook.npy), the resynthesised wavs
            (vqvae_resynth: wav.scp) and the synthesis list -> OUT/{metadata.yaml,2019/{metadata.yaml,code/,
            english/test/}}: <utt>.txt (one frame a line) per test utterance, <voice>_<id>.wav per synthesis line;
            checked before it replaces OUT.
  validate: check a directory against the layout (local_models/vqvae/submission.py); exit 1 listing every defect.
"""
import argparse
import sys
from pathlib import Path

import numpy as np

from local_models.common.datadir import DataDirError, read_table
from local_models.vqvae.featio import load_features
from local_models.vqvae.submission import ABX_DISTANCES, LANGUAGES, validate_submission, write_submission


def boolean(text: str) -> bool:
    if text not in ("true", "false"):
        raise argparse.ArgumentTypeError(f"expected true or false, got '{text}'")
    return text == "true"


def get_parser():
    p = argparse.ArgumentParser(prog="vqvae_submission", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    for name in ("write", "validate"):
        s = sub.add_parser(name, help=f"{name} a submission directory")
        s.add_argument("--test-scp", required=True, help="wav.scp of the test set: its utterances need a .txt each")
        s.add_argument("--synthesis-list", required=True, help="`<utt> <voice>` lines: the wavs to submit")
        s.add_argument("--language", choices=LANGUAGES, default="english")
        s.add_argument("submission", help="the submission directory (write: replaced whole)")
    w = sub.choices["write"]
    w.add_argument("--codes-dir", required=True, help="vqvae_extract's output: codes/<utt>.npy and codebook.npy")
    w.add_argument("--wav-scp", required=True, help="`<utt> <path>` of the resynthesised wavs (vqvae_resynth)")
    w.add_argument("--units", choices=["embedding", "one-hot"], default="embedding",
                   help="a frame's line: its code's codebook embedding (default) or one-hot vector")
    w.add_argument("--author", required=True)
    w.add_argument("--affiliation", required=True)
    w.add_argument("--open-source", type=boolean, default=True, help="true (default; copies --code) or false")
    w.add_argument("--system-description", required=True)
    w.add_argument("--abx-distance", choices=ABX_DISTANCES, default="dtw_cosine")
    w.add_argument("--using-parallel-train", type=boolean, default=False)
    w.add_argument("--using-external-data", type=boolean, default=False)
    w.add_argument("--code", action="append", default=[],
                   help="a file copied to 2019/code/ (repeat it; with --open-source true)")
    return p


def expected(args):
    utts = list(read_table(args.test_scp))
    synthesis = read_table(args.synthesis_list)
    unknown = sorted(set(synthesis) - set(utts))
    if unknown:
        raise DataDirError(args.synthesis_list, None, f"'{unknown[0]}' is not an utterance of {args.test_scp}")
    return utts, synthesis


def write(args, utts, synthesis):
    codes_all = load_features(Path(args.codes_dir) / "codes")
    missing = [u for u in utts if u not in codes_all]
    if missing:
        raise DataDirError(Path(args.codes_dir) / "codes", None,
                           f"{len(missing)} test utterance(s) have no codes, e.g. {missing[0]}")
    codebook = np.load(Path(args.codes_dir) / "codebook.npy")
    units = {"codebook": codebook} if args.units == "embedding" else {"num_codes": len(codebook)}
    if not args.open_source and args.code:
        raise ValueError("--code with --open-source false: a closed-source submission has no code/")
    if args.open_source and not args.code:
        raise ValueError("--open-source true needs --code files (2019/code/ must not be empty)")
    root_meta = {"author": args.author, "affiliation": args.affiliation, "open source": args.open_source}
    track_meta = {"abx distance": args.abx_distance, "system description": args.system_description,
                  "using parallel train": args.using_parallel_train, "using external data": args.using_external_data}
    wavs = {u: Path(p) for u, p in read_table(args.wav_scp).items()}
    out = write_submission(args.submission, {u: codes_all[u] for u in utts}, wavs, synthesis, root_meta, track_meta,
                           [Path(f) for f in args.code], language=args.language, **units)
    print(f"vqvae_submission: {out}: {len(utts)} unit files ({args.units}), {len(synthesis)} wavs; valid",
          file=sys.stderr)


def main(argv=None):
    args = get_parser().parse_args(argv)
    try:
        utts, synthesis = expected(args)
        if args.command == "write":
            write(args, utts, synthesis)
        else:
            validate_submission(args.submission, {args.language: (utts, synthesis)})
            print(f"vqvae_submission: {args.submission}: a valid ZeroSpeech 2019 submission ({args.language}: "
                  f"{len(utts)} unit files, {len(synthesis)} wavs)", file=sys.stderr)
    except (DataDirError, ValueError, OSError) as e:  # SubmissionError is a ValueError
        print(f"vqvae_submission: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
