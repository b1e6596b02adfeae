"""Decode a data set with a trained multilingual RNN-T (paper 001): streaming beam search, known language or
LID-free (Section 4.2), with early switch-off of decoders (Section 6.3, Table 7). See --help and
local_models/multisoftmax/decode.py for the search and the switch-off rule."""
from __future__ import annotations

import argparse
import sys

from local_models.common.device import add_ngpu_option
from local_models.multisoftmax import inference


def get_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="multisoftmax_decode",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="""Decode every utterance of FEATS with the model trained in MODEL_DIR (config.yaml + MODEL_FILE),
streaming: the encoder and the beam search advance --chunk 30 ms frames at a time.

--mode known    the true language (--utt2lid) selects the decoder: the language's head (multisoftmax,
                mono: only its own language), the one-hot input (onehot), nothing (vanilla).
--mode lidfree  multisoftmax with an LID head: one encoder pass, every language's decoder in parallel,
                chosen language = highest average LID posterior among the decoders still running;
                decoders are switched off early by --tau/--s_th (paper eq. 1). vanilla: its union
                decoder, language read from the hypothesis' script. Needs no --utt2lid (with it: the
                oracle and the LID accuracy too).

Writes OUT_DIR/hyp_units (<utt> units), hyp (<utt> words), hyp_lang (<utt> chosen language, <none> if a
vanilla hypothesis has no clear script), decode_stats.json (CPU seconds of encoder and decoders, T_avg,
LID accuracy), and in lidfree mode also decoder_frames (<utt> S active frames per language) and, with an
LID head, hyp_oracle (the true language's decoder, as far as it ran) and lid_post (<utt> average posterior per language;
languages in decode_stats.json "langs" order). --switch_off_grid also decodes each of its settings (one
encoder pass per utterance shared by all) into SWITCH_OFF_DIR/<tau>_<s_th>/ (e.g. inf_inf, 30_0.5), with a
summary in SWITCH_OFF_DIR/switch_off_grid.json; OUT_DIR keeps the --tau/--s_th setting.""",
    )
    p.add_argument("--model_dir", required=True, help="exp/<system>: config.yaml and the trained model")
    p.add_argument("--model-file", "--model_file", dest="model_file", default="valid.loss.best.pth",
                   help="checkpoint in MODEL_DIR (default %(default)s)")
    add_ngpu_option(p)
    p.add_argument("--feats", required=True, help="feats.scp of (T, 80) log-mels, e.g. dump/fbank/<set>/feats.scp")
    p.add_argument("--utt2lid", help="<utt> <language> for every utterance, e.g. data/<set>/utt2lid; needed by "
                                     "--mode known and --only_lang; --mode lidfree runs without it (then no "
                                     "hyp_oracle and no LID accuracy)")
    p.add_argument("--mode", choices=("known", "lidfree"), default="known", help="default %(default)s")
    p.add_argument("--only_lang", default="", help="decode only the utterances of this language (a monolingual "
                                                   "model on a set that mixes languages)")
    p.add_argument("--beam", type=int, default=4, help="beam width; 1 = greedy (default %(default)s)")
    p.add_argument("--max_sym_per_frame", type=int, default=3,
                   help="units a hypothesis may emit per 30 ms frame (default %(default)s)")
    p.add_argument("--chunk", type=int, default=10, help="streaming chunk in 30 ms frames (default %(default)s)")
    p.add_argument("--tau", type=float, default=float("inf"),
                   help="lidfree: minimum wait in 30 ms frames before a decoder may be switched off (default inf)")
    p.add_argument("--s_th", type=float, default=float("inf"),
                   help="lidfree: switch decoder l off once s_l(t) < max s(t) - S_TH (default inf: never)")
    p.add_argument("--switch_off_grid", default="",
                   help='lidfree: several "tau:s_th" settings, e.g. "inf:inf 100:0.2 30:0.2 30:0.5 10:0.2" '
                        "(OUT_DIR still gets --tau/--s_th)")
    p.add_argument("--switch_off_dir", help="where the grid's settings go (default OUT_DIR/switchoff)")
    p.add_argument("out_dir", nargs="?", help="output directory (or --out_dir)")
    p.add_argument("--out_dir", dest="out_dir_opt", metavar="OUT_DIR", help="output directory")
    return p


def main(argv=None) -> int:
    parser = get_parser()
    args = parser.parse_args(argv)
    if bool(args.out_dir) == bool(args.out_dir_opt):
        parser.error("give the output directory once: as the last argument or as --out_dir")
    return inference.run(options(args, args.out_dir or args.out_dir_opt))


def options(args, out_dir: str) -> inference.DecodeOptions:
    """inference.run's options from the parsed ones."""
    return inference.DecodeOptions(
        model_dir=args.model_dir, model_file=args.model_file, ngpu=args.ngpu, feats=args.feats, utt2lid=args.utt2lid,
        mode=args.mode, only_lang=args.only_lang, beam=args.beam, max_sym_per_frame=args.max_sym_per_frame,
        chunk=args.chunk, tau=args.tau, s_th=args.s_th, switch_off_grid=args.switch_off_grid,
        switch_off_dir=args.switch_off_dir, out_dir=out_dir)


if __name__ == "__main__":
    sys.exit(main())
