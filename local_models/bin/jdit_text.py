"""Text side of the KSS / JDI-T recipe: jamo phoneme tokens, the ESPnet token list, shapes, durations.

Subcommands (each with --help):
  g2p DATA_DIR            data/<set>/text -> data/<set>/text_phn (`<utt> tok tok ...`, local_models.jdit.g2p)
  token-list TEXT_PHN OUT ESPnet2 token list of the training set (<blank>, <unk>, by count, then the rest of
                          the g2p inventory unless --seen-only, <sos/eos>)
  shape TEXT_PHN TOKENS OUT  ESPnet text shape file (`<utt> <num_tokens>,<vocab_size>`); checks every token
                          is in TOKENS (one not in it would silently become <unk>)
  durations DATA_DIR      data/<set>/{text_phn,phones.ctm,utt2num_frames} -> data/<set>/durations (frames per
                          token, from the true espeak-ng phone times; local_models.jdit.durations)
  closures DATA_DIR       data/<set>/{wav.scp,phones.ctm} -> data/<set>/phones_closure.ctm: the same phone times with
                          each stop's closure given to the stop (espeak-ng's events give it to the phone before;
                          local_models.common.synth.closures_to_following)
Errors name the file and line.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from local_models.common.datadir import DataDirError, atomic_open, iter_lines, read_table, write_table
from local_models.jdit import durations, g2p


def cmd_g2p(args) -> int:
    d = Path(args.data_dir)
    text_path = d / "text"
    if not text_path.is_file():
        raise DataDirError(text_path, None, "file does not exist (stage 1 makes it)")
    out, errors, dropped = {}, [], []
    for lineno, line in iter_lines(text_path):
        parts = line.split(maxsplit=1)
        if len(parts) != 2:
            errors.append(f"{text_path}:{lineno}: expected '<utt> <text>', got {line[:60]!r}")
            continue
        utt, text = parts
        try:
            out[utt] = g2p.text_to_tokens(text, unknown=args.unknown, dropped=dropped)
        except ValueError as e:
            errors.append(f"{text_path}:{lineno}: utterance {utt}: {e}")
    if errors:
        for e in errors[:20]:
            print(f"jdit_text g2p: {e}", file=sys.stderr)
        more = " (first 20 shown)" if len(errors) > 20 else ""
        print(f"jdit_text g2p: {len(errors)} line(s) of {text_path} cannot be converted{more}; fix the text "
              "or pass --unknown drop to drop unknown characters", file=sys.stderr)
        return 1
    if dropped:
        chars = "".join(sorted(set(dropped)))
        print(f"jdit_text g2p: {text_path}: dropped {len(dropped)} unknown characters: {chars!r}", file=sys.stderr)
    write_table(d / args.out_name, out)
    n_tok = sum(len(v) for v in out.values())
    print(f"jdit_text g2p: {d}: {len(out)} utterances, {n_tok} tokens -> {d / args.out_name}", file=sys.stderr)
    return 0


def _read_token_table(path):
    return {utt: v.split() for utt, v in read_table(path).items()}


def cmd_token_list(args) -> int:
    seqs = list(_read_token_table(args.text_phn).values())
    tokens = g2p.token_list(seqs, full_inventory=not args.seen_only)
    seen = len(set(t for s in seqs for t in s))
    with atomic_open(args.out) as f:
        f.writelines(t + "\n" for t in tokens)
    print(f"jdit_text token-list: {len(tokens)} tokens ({seen} used in {args.text_phn}, "
          f"{len(tokens) - 3 - seen} more of the g2p inventory, <blank> <unk> <sos/eos>) -> {args.out}", file=sys.stderr)
    return 0


def cmd_shape(args) -> int:
    vocab = Path(args.tokens).read_text(encoding="utf-8").split("\n")
    vocab = set(t for t in vocab if t)
    for lineno, line in iter_lines(args.text_phn):
        utt, *toks = line.split()
        unknown = sorted(set(toks) - vocab)
        if unknown:
            raise DataDirError(args.text_phn, lineno, f"utterance {utt}: tokens {' '.join(unknown)} are not in "
                                                      f"{args.tokens} (they would become <unk>)")
    table = _read_token_table(args.text_phn)
    write_table(args.out, {u: f"{len(t)},{len(vocab)}" for u, t in table.items()})
    return 0


def read_ctm(path: Path) -> dict:
    """{utt: [(start_s, dur_s, phone), ...]} of a CTM file, in file order."""
    ctm = {}
    for lineno, line in iter_lines(path):
        f = line.split()
        if len(f) != 5:
            raise DataDirError(path, lineno, "expected 5 fields: utt chan start dur phone")
        try:
            ctm.setdefault(f[0], []).append((float(f[2]), float(f[3]), f[4]))
        except ValueError:
            raise DataDirError(path, lineno, f"start / duration are not numbers: {line.strip()!r}") from None
    return ctm


def cmd_durations(args) -> int:
    d = Path(args.data_dir)
    tokens = _read_token_table(d / "text_phn")
    num_frames = {u: int(v) for u, v in read_table(d / "utt2num_frames").items()}
    ctm = read_ctm(d / args.ctm)
    out, cost, n_tok = {}, 0.0, 0
    for utt, toks in tokens.items():
        if utt not in ctm or utt not in num_frames:
            raise DataDirError(d / (args.ctm if utt not in ctm else "utt2num_frames"), None, f"no entry for {utt}")
        frames, c = durations.token_frames(toks, ctm[utt], num_frames[utt], args.sample_rate, args.hop_length)
        out[utt], cost, n_tok = frames, cost + c, n_tok + len(toks)
    write_table(d / args.out, out)
    print(f"jdit_text durations: {d / args.ctm}: {len(out)} utterances, alignment cost {cost / max(1, n_tok):.3f} "
          f"per token (0 = every espeak phone matched its jamo) -> {d / args.out}", file=sys.stderr)
    return 0


def cmd_closures(args) -> int:
    from local_models.common.audio import load_audio
    from local_models.common.synth import closures_to_following

    d = Path(args.data_dir)
    ctm, wavs = read_ctm(d / "phones.ctm"), read_table(d / "wav.scp")
    lines, moved = [], []
    for utt, phones in ctm.items():
        if utt not in wavs:
            raise DataDirError(d / "wav.scp", None, f"no entry for {utt} (it is in phones.ctm)")
        wave, sr = load_audio(wavs[utt])
        ends = [round(s * sr) for s, _, _ in phones] + [round((phones[-1][0] + phones[-1][1]) * sr)]
        bounds = [min(b, len(wave)) for b in ends]  # ms-rounded times may overshoot the last sample
        segs = [(p, a, b) for (_, _, p), a, b in zip(phones, bounds, bounds[1:])]
        new = closures_to_following(segs, wave, sr)
        moved += [(a - b) / sr for (_, a, _), (_, b, _) in zip(segs, new) if a != b]
        lines += [f"{utt} 1 {a / sr:.3f} {(b - a) / sr:.3f} {p}\n" for p, a, b in new]
    with atomic_open(d / "phones_closure.ctm") as f:
        f.writelines(lines)
    print(f"jdit_text closures: {d / 'phones.ctm'}: {len(moved)} closures moved to the following phone (mean "
          f"{1000 * sum(moved) / max(1, len(moved)):.1f} ms) -> {d / 'phones_closure.ctm'}", file=sys.stderr)
    return 0


def get_parser():
    p = argparse.ArgumentParser(prog="jdit_text", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("g2p", help="data/<set>/text -> text_phn")
    s.add_argument("--unknown", default="error", choices=["error", "drop"],
                   help="characters with no Korean pronunciation: stop with file:line (default) or drop them")
    s.add_argument("--out-name", default="text_phn", help="output file in DATA_DIR (default: %(default)s)")
    s.add_argument("data_dir", metavar="DATA_DIR")
    s.set_defaults(func=cmd_g2p)
    s = sub.add_parser("token-list", help="ESPnet2 token list of a text_phn")
    s.add_argument("--seen-only", action="store_true",
                   help="only the tokens of TEXT_PHN (ESPnet's tokenize_text); default: also the unseen inventory")
    s.add_argument("text_phn", metavar="TEXT_PHN")
    s.add_argument("out", metavar="OUT_TOKENS_TXT")
    s.set_defaults(func=cmd_token_list)
    s = sub.add_parser("shape", help="ESPnet text shape file")
    s.add_argument("text_phn", metavar="TEXT_PHN")
    s.add_argument("tokens", metavar="TOKENS_TXT")
    s.add_argument("out", metavar="OUT_SHAPE")
    s.set_defaults(func=cmd_shape)
    s = sub.add_parser("durations", help="frames per token from phones.ctm (mini corpus)")
    s.add_argument("--sample-rate", type=int, default=22050)
    s.add_argument("--hop-length", type=int, default=256)
    s.add_argument("--ctm", default="phones.ctm", help="phone times in DATA_DIR (default: %(default)s)")
    s.add_argument("--out", default="durations", help="output file in DATA_DIR (default: %(default)s)")
    s.add_argument("data_dir", metavar="DATA_DIR")
    s.set_defaults(func=cmd_durations)
    s = sub.add_parser("closures", help="phones.ctm with stop closures given to the stop -> phones_closure.ctm")
    s.add_argument("data_dir", metavar="DATA_DIR")
    s.set_defaults(func=cmd_closures)
    return p


def main(argv=None) -> int:
    args = get_parser().parse_args(argv)
    try:
        return args.func(args)
    except (DataDirError, ValueError, OSError) as e:
        print(f"jdit_text {args.cmd}: error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
