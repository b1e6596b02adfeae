"""Text side of the KSS / JDI-T recipe: phoneme tokens (espeak-ng or jamo), the ESPnet token list, shapes, durations.

Subcommands (each with --help):
  g2p DATA_DIR            data/<set>/text -> data/<set>/text_phn (`<utt> tok tok ...`): espeak-ng phonemes
                          (local_models.jdit.phonemes; --lang ko or es) or jamo (local_models.jdit.g2p, Korean),
                          --token-type
  token-list TEXT_PHN OUT ESPnet2 token list of the training set (<blank>, <unk>, by count, then the rest of
                          the g2p inventory unless --seen-only, <sos/eos>)
  shape TEXT_PHN TOKENS OUT  ESPnet text shape file (`<utt> <num_tokens>,<vocab_size>`); checks every token
                          is in TOKENS (one not in it would silently become <unk>)
  durations DATA_DIR      data/<set>/{text_phn,phones.ctm,utt2num_frames} -> data/<set>/durations (frames per
                          token, from the true espeak-ng phone times: one to one for espeak tokens, aligned for
                          jamo; local_models.jdit.durations)
  closures DATA_DIR       data/<set>/{wav.scp,phones.ctm} -> data/<set>/phones_closure.ctm: the same phone times with
                          each stop's closure given to the stop (espeak-ng's events give it to the phone before;
                          local_models.common.synth.closures_to_following)
Errors name the file and line.
"""
import argparse
import sys

from local_models.common.datadir import DataDirError
from local_models.common.synth import EspeakUnavailable
from local_models.jdit import phonemes, text


def _g2p(a):
    return text.g2p_data_dir(a.data_dir, a.unknown, a.out_name, a.token_type, a.lang)


def _token_list(a):
    return text.write_token_list(a.text_phn, a.out, a.seen_only, a.token_type, a.lang)


def _shape(a):
    return text.write_shapes(a.text_phn, a.tokens, a.out)


def _durations(a):
    return text.write_durations(a.data_dir, a.sample_rate, a.hop_length, a.ctm, a.out, a.token_type)


def _closures(a):
    return text.write_closures(a.data_dir)


def get_parser():
    p = argparse.ArgumentParser(prog="jdit_text", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    token_type = argparse.ArgumentParser(add_help=False)
    token_type.add_argument("--token-type", default="espeak", choices=phonemes.TOKEN_TYPES,
                            help="espeak: espeak-ng's phonemes (one per phone event of the mini corpus); jamo: the "
                                 "jamo front end, for recorded speech (default: %(default)s)")
    lang = argparse.ArgumentParser(add_help=False)
    lang.add_argument("--lang", default="ko", choices=phonemes.LANGS,
                      help="the text's language: espeak-ng's voice and the text checks of the front end "
                           "(default: %(default)s; jamo is Korean only)")
    s = sub.add_parser("g2p", help="data/<set>/text -> text_phn", parents=[token_type, lang])
    s.add_argument("--unknown", default="error", choices=["error", "drop"],
                   help="characters with no reading in --lang: stop with file:line (default) or drop them")
    s.add_argument("--out-name", default="text_phn", help="output file in DATA_DIR (default: %(default)s)")
    s.add_argument("data_dir", metavar="DATA_DIR")
    s.set_defaults(func=_g2p)
    s = sub.add_parser("token-list", help="ESPnet2 token list of a text_phn", parents=[token_type, lang])
    s.add_argument("--seen-only", action="store_true",
                   help="only the tokens of TEXT_PHN (ESPnet's tokenize_text); default: also the unseen inventory")
    s.add_argument("text_phn", metavar="TEXT_PHN")
    s.add_argument("out", metavar="OUT_TOKENS_TXT")
    s.set_defaults(func=_token_list)
    s = sub.add_parser("shape", help="ESPnet text shape file")
    s.add_argument("text_phn", metavar="TEXT_PHN")
    s.add_argument("tokens", metavar="TOKENS_TXT")
    s.add_argument("out", metavar="OUT_SHAPE")
    s.set_defaults(func=_shape)
    s = sub.add_parser("durations", help="frames per token from phones.ctm (mini corpus)", parents=[token_type])
    s.add_argument("--sample-rate", type=int, default=22050)
    s.add_argument("--hop-length", type=int, default=256)
    s.add_argument("--ctm", default="phones.ctm", help="phone times in DATA_DIR (default: %(default)s)")
    s.add_argument("--out", default="durations", help="output file in DATA_DIR (default: %(default)s)")
    s.add_argument("data_dir", metavar="DATA_DIR")
    s.set_defaults(func=_durations)
    s = sub.add_parser("closures", help="phones.ctm with stop closures given to the stop -> phones_closure.ctm")
    s.add_argument("data_dir", metavar="DATA_DIR")
    s.set_defaults(func=_closures)
    return p


def main(argv=None) -> int:
    args = get_parser().parse_args(argv)
    try:
        return args.func(args)
    except (DataDirError, ValueError, OSError, EspeakUnavailable) as e:
        print(f"jdit_text {args.cmd}: error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
