"""Durations a trained JDI-T's aligner gives a data dir (teacher forced, eval mode: deterministic), and the ones
its duration predictor gives the text alone: the two duration sequences the paper's model uses (section 2.2)
and its inference uses (section 2.3).

Reads DATA/text_phn and DATA/feats.scp (raw log-mel; the model's global_mvn normalises them), writes
OUT/durations_aligner and OUT/durations_predictor (`<utt> <frames per token ...>`, one entry per text_phn
token, the aligner's summing to the utterance's frame count), OUT/durations_aligner_viterbi (the best monotonic
path through the aligner's attention: NOT the paper's rule, an evaluation of how much its argmax read-out
lags) and, with --plot N, OUT/images/<utt>.png for the first N utterances (forward-attention weights with
the true token boundaries when DATA/durations exists).
"""
import argparse
import sys
from pathlib import Path

from local_models.common.device import add_ngpu_option
from local_models.jdit.align import align_data_dir


def get_parser():
    p = argparse.ArgumentParser(prog="jdit_align", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model-dir", required=True, help="JDI-T exp dir (config.yaml + model file)")
    p.add_argument("--model-file", "--model_file", dest="model_file", default=None,
                   help="checkpoint in --model-dir (default: valid.loss.best.pth, else the newest epoch)")
    add_ngpu_option(p)
    p.add_argument("--plot", type=int, default=0, help="plot the attention of the first N utterances")
    p.add_argument("data_dir", help="data dir with text_phn and feats.scp")
    p.add_argument("out_dir")
    return p


def main(argv=None):
    args = get_parser().parse_args(argv)
    try:
        n = align_data_dir(args.data_dir, args.model_dir, args.out_dir, args.model_file, args.ngpu, args.plot)
    except (FileNotFoundError, ValueError) as e:
        sys.exit(f"jdit_align: {e}")
    print(f"jdit_align: {n} utterances -> {Path(args.out_dir)}/durations_{{aligner,aligner_viterbi,predictor}}")


if __name__ == "__main__":
    main()
