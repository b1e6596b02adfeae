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

import numpy as np

from local_models.common.device import add_ngpu_option, device_of


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


def plot_alignment(path: Path, utt: str, alpha: np.ndarray, true_durations=None) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4))
    ax.imshow(alpha.T, origin="lower", aspect="auto", interpolation="none", cmap="viridis")
    if true_durations is not None:  # the true path: token index against the frames it covers
        ends = np.cumsum(true_durations)
        frames = np.arange(alpha.shape[0])
        ax.plot(frames, np.searchsorted(ends, frames, side="right"), "w--", lw=0.8, label="true (espeak-ng)")
        ax.legend(loc="upper left", fontsize=8)
    ax.set_xlabel("mel frame")
    ax.set_ylabel("phoneme token")
    ax.set_title(f"JDI-T aligner forward attention: {utt}")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def main(argv=None):
    args = get_parser().parse_args(argv)
    import kaldiio
    import torch
    from tqdm import tqdm

    from local_models.bin.tts_synth import load_tts_model, read_text
    from local_models.common.datadir import atomic_open, read_table

    data, out = Path(args.data_dir), Path(args.out_dir)
    try:
        device = device_of(args.ngpu)
        texts = read_text(data / "text_phn")
        if not (data / "feats.scp").is_file():
            raise FileNotFoundError(f"{data}/feats.scp: no features (run stage 2)")
        feats = kaldiio.load_scp(str(data / "feats.scp"))
        missing = sorted(set(texts) - set(feats.keys()))
        if missing:
            raise ValueError(f"{data}/feats.scp: no features for {len(missing)} utterance(s), e.g. {missing[0]}")
        model_dir = Path(args.model_dir)
        model, train_args = load_tts_model(model_dir, args.model_file, device)
        true = read_table(data / "durations") if (data / "durations").is_file() else {}
    except (FileNotFoundError, ValueError) as e:
        sys.exit(f"jdit_align: {e}")
    from local_models.jdit.model import JDIT

    tts = model.tts
    if not isinstance(tts, JDIT):
        sys.exit(f"jdit_align: {model_dir} is not a JDI-T model ({type(tts).__name__})")
    token_id = {t: i for i, t in enumerate(train_args.token_list)}
    unk = token_id.get("<unk>")
    if args.plot:
        (out / "images").mkdir(parents=True, exist_ok=True)
    aligner, viterbi, predictor = {}, {}, {}
    with torch.no_grad():
        for n, utt in enumerate(tqdm(sorted(texts), desc="jdit_align", mininterval=5, disable=None)):
            toks = texts[utt].split()
            ids = [token_id.get(t, unk) for t in toks]
            if None in ids:
                sys.exit(f"jdit_align: {data}/text_phn: utterance {utt}: token '{toks[ids.index(None)]}' not in the "
                         f"model's token list and no <unk>")
            x = torch.tensor(ids, device=device).view(1, -1)
            xl = torch.tensor([len(ids)], device=device)
            y = torch.tensor(np.array(feats[utt], dtype=np.float32), device=device).unsqueeze(0)
            yl = torch.tensor([y.size(1)], device=device)
            if model.normalize is not None:
                y, _ = model.normalize(y, yl)
            ds, alpha = tts.align(x, xl, y, yl, readouts=("argmax", "viterbi"))
            aligner[utt] = ds["argmax"][0].tolist()
            viterbi[utt] = ds["viterbi"][0].tolist()
            hs, h_mask = tts.encode(x, xl)
            predictor[utt] = tts.duration_predictor.inference(hs, ~h_mask)[0].tolist()
            if n < args.plot:
                ref = np.array(true[utt].split(), dtype=int) if utt in true else None
                plot_alignment(out / "images" / f"{utt}.png", utt, alpha[0].detach().float().cpu().numpy(), ref)
    for name, table in (("durations_aligner", aligner), ("durations_aligner_viterbi", viterbi),
                        ("durations_predictor", predictor)):
        with atomic_open(out / name) as f:
            for utt in sorted(table):
                f.write(f"{utt} {' '.join(map(str, table[utt]))}\n")
    print(f"jdit_align: {len(aligner)} utterances -> {out}/durations_{{aligner,aligner_viterbi,predictor}}")


if __name__ == "__main__":
    main()
