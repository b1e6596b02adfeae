"""The durations a trained JDI-T gives a data dir (`python -m local_models.bin.jdit_align`, whose --help describes
the outputs): its aligner's, teacher forced (argmax and best-path read-outs), and its duration predictor's on the
text alone, with plots of the aligner's forward attention.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from local_models.common.datadir import atomic_open, read_table
from local_models.common.device import device_of
from local_models.common.plots import pyplot, save_figure

from .inference import load_tts_model, read_text


def plot_alignment(path: Path, utt: str, alpha: np.ndarray, true_durations=None) -> None:
    plt = pyplot()

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
    save_figure(fig, path)


def load_inputs(data: Path, model_dir: Path, model_file, ngpu: int):
    """(device, texts, feats, model, train_args, true durations) of a data dir and a JDI-T exp dir; ValueError or
    FileNotFoundError naming what is missing."""
    import kaldiio

    device = device_of(ngpu)
    texts = read_text(data / "text_phn")
    if not (data / "feats.scp").is_file():
        raise FileNotFoundError(f"{data}/feats.scp: no features (run stage 2)")
    feats = kaldiio.load_scp(str(data / "feats.scp"))
    missing = sorted(set(texts) - set(feats.keys()))
    if missing:
        raise ValueError(f"{data}/feats.scp: no features for {len(missing)} utterance(s), e.g. {missing[0]}")
    model, train_args = load_tts_model(model_dir, model_file, device)
    true = read_table(data / "durations") if (data / "durations").is_file() else {}
    return device, texts, feats, model, train_args, true


def align_data_dir(data_dir, model_dir, out_dir, model_file=None, ngpu: int = 0, plot: int = 0) -> int:
    """OUT/durations_{aligner,aligner_viterbi,predictor} (and with plot N, OUT/images/<utt>.png for the first N
    utterances); returns the number of utterances. ValueError / FileNotFoundError with a message for the user."""
    import torch
    from tqdm import tqdm

    data, out, model_dir = Path(data_dir), Path(out_dir), Path(model_dir)
    device, texts, feats, model, train_args, true = load_inputs(data, model_dir, model_file, ngpu)
    from .model import JDIT

    tts = model.tts
    if not isinstance(tts, JDIT):
        raise ValueError(f"{model_dir} is not a JDI-T model ({type(tts).__name__})")
    token_id = {t: i for i, t in enumerate(train_args.token_list)}
    unk = token_id.get("<unk>")
    if plot:
        (out / "images").mkdir(parents=True, exist_ok=True)
    aligner, viterbi, predictor = {}, {}, {}
    with torch.no_grad():
        for n, utt in enumerate(tqdm(sorted(texts), desc="jdit_align", mininterval=5, disable=None)):
            toks = texts[utt].split()
            ids = [token_id.get(t, unk) for t in toks]
            if None in ids:
                raise ValueError(f"{data}/text_phn: utterance {utt}: token '{toks[ids.index(None)]}' not in the "
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
            if n < plot:
                ref = np.array(true[utt].split(), dtype=int) if utt in true else None
                plot_alignment(out / "images" / f"{utt}.png", utt, alpha[0].detach().float().cpu().numpy(), ref)
    for name, table in (("durations_aligner", aligner), ("durations_aligner_viterbi", viterbi),
                        ("durations_predictor", predictor)):
        with atomic_open(out / name) as f:
            for utt in sorted(table):
                f.write(f"{utt} {' '.join(map(str, table[utt]))}\n")
    return len(aligner)
