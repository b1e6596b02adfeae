"""Feature dumps of the SALAD recipe: raw frame pairs per utterance, train statistics, stateful windows.

dump_set   data dir (wav.scp + lab.scp) -> OUT/acou.{ark,scp} (T, 43) raw WORLD frames, OUT/ling.{ark,scp}
           (T, D+2) linguistic frames (question-file vector of the phone + duration + position in the phone),
           OUT/{acou,ling}_shape, OUT/utt2num_frames; for the duration model OUT/lingp.{ark,scp} (N, D) one
           vector per phone and OUT/dur (text_int: frames per phone, as the linguistic frames assign them, summing
           to the utterance's frames), OUT/phones (the phone names), OUT/lingp_shape. One pass, streamed, `nj`
           worker processes.
fit_stats  train dump -> stats.npz (acoustic min-max, linguistic z-norm of the real-valued dims) and, with
           dur_out, the duration model's dur_stats.npz (phone-level z-norm, mean / std of log(1 + frames)).
make_windows  train dump -> the paper's stateful arrangement: all utterances concatenated (sorted ids), cut into
           `streams` equal pieces, each cut into non-overlapping windows of `window` frames (the tail of each
           piece that does not fill a window is dropped); key w<b>_s<s>, `pos` = "b s".
Normalisation itself happens inside the model (buffers from stats.npz), so dumps hold raw values once.
"""
from __future__ import annotations

import multiprocessing
from pathlib import Path
from typing import Dict, Iterator, NamedTuple, Optional, Tuple

import numpy as np

from local_models.common.audio import load_audio
from local_models.common.datadir import DataDirError, atomic_open, read_table, write_table
from local_models.common.features import ArkStream

from . import acoustic, linguistic

SAMPLE_RATE = 16000
FRAME_SHIFT_S = acoustic.SHIFT_MS / 1000.0
# A label file may end up to this far from the end of its wave (label rounding, trailing silence trims).
MAX_LAB_MISMATCH_S = 0.1

_QUESTIONS: Dict[str, tuple] = {}  # per-process cache: path -> parsed question set


def read_lab_scp(data_dir) -> Dict[str, str]:
    """utt -> .lab path from `<data_dir>/lab.scp`; every utterance of wav.scp must have one."""
    data_dir = Path(data_dir)
    scp = data_dir / "lab.scp"
    if not scp.is_file():
        raise DataDirError(scp, None, "missing: stage 1 (data) writes the label list (utt -> HTS .lab file)")
    labs = read_table(scp)
    wavs = read_table(data_dir / "wav.scp")
    missing = sorted(set(wavs) - set(labs))
    if missing:
        raise DataDirError(scp, None, f"no label for {len(missing)} utterance(s) of wav.scp, e.g. '{missing[0]}'")
    return {u: labs[u] for u in wavs}


def _questions(path: str):
    if path not in _QUESTIONS:
        _QUESTIONS[path] = linguistic.load_questions(path)
    return _QUESTIONS[path]


def max_phone_frames(labs: Dict[str, str], questions: str) -> int:
    """Longest phone of a set in frames, as frame_features assigns them (the paper's duration normaliser,
    taken on train)."""
    q = _questions(questions)
    longest = 1
    for lab in labs.values():
        starts, ends, _ = linguistic.phone_features(lab, q)
        longest = max(longest, int(linguistic.frame_durations(starts, ends, FRAME_SHIFT_S).max()))
    return longest


def utterance_frames(utt: str, wav_entry: str, lab: str, questions: str, f0_method: str,
                     max_dur_frames: int) -> Tuple[str, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(utt, acoustic (T, 43), linguistic (T, D+2), phone vectors (N, D), frames per phone (N,), phone names)
    of one utterance; T from the WORLD analysis."""
    wave, _ = load_audio(wav_entry, SAMPLE_RATE)
    acou = acoustic.analyse(wave, SAMPLE_RATE, acoustic.SHIFT_MS, f0_method)
    starts, ends, x = linguistic.phone_features(lab, _questions(questions))
    dur = len(wave) / SAMPLE_RATE
    if abs(float(ends[-1]) - dur) > MAX_LAB_MISMATCH_S:
        raise ValueError(f"{lab}: labels end at {float(ends[-1]):.3f} s but the wave of '{utt}' lasts {dur:.3f} s")
    ling = linguistic.frame_features(x, starts, ends, FRAME_SHIFT_S, num_frames=len(acou),
                                     max_dur_frames=max_dur_frames)
    durations = linguistic.frame_durations(starts, ends, FRAME_SHIFT_S, num_frames=len(acou))
    return utt, acou, ling.astype(np.float32), x.astype(np.float32), durations, linguistic.phone_names(lab)


class FrameJob(NamedTuple):
    """One utterance of dump_set: utterance_frames' arguments, by name (a pool worker gets one picklable item)."""
    utt: str
    wav_entry: str
    lab: str
    questions: str
    f0_method: str
    max_dur_frames: int


def _job(job: FrameJob):
    try:
        return utterance_frames(job.utt, job.wav_entry, job.lab, job.questions, job.f0_method, job.max_dur_frames)
    except Exception as e:  # name the utterance: a pool traceback alone does not
        raise RuntimeError(f"utterance '{job.utt}': {e}") from e


def dump_set(data_dir, out_dir, questions: str, f0_method: str = "harvest", nj: int = 1,
             max_dur_frames: Optional[int] = None, progress: bool = True) -> int:
    """Write OUT_DIR's arks/shapes for every utterance of `data_dir`; returns the number of utterances.

    max_dur_frames None: take it from this set's labels (the train set) and write OUT_DIR/max_dur_frames."""
    from tqdm import tqdm

    data_dir, out_dir = Path(data_dir), Path(out_dir)
    labs = read_lab_scp(data_dir)
    wavs = read_table(data_dir / "wav.scp")
    if max_dur_frames is None:
        max_dur_frames = max_phone_frames(labs, questions)
    jobs = [FrameJob(u, wavs[u], labs[u], str(questions), f0_method, max_dur_frames)
            for u in sorted(labs, key=str.encode)]
    out_dir.mkdir(parents=True, exist_ok=True)
    shapes = {"acou": {}, "ling": {}, "lingp": {}}
    durations, phones = {}, {}
    with ArkStream(out_dir / "acou") as acou_ark, ArkStream(out_dir / "ling") as ling_ark, \
            ArkStream(out_dir / "lingp") as phone_ark:
        ctx = multiprocessing.get_context("fork")
        with ctx.Pool(nj) if nj > 1 else _Serial() as pool:
            for utt, acou, ling, xp, dur, names in tqdm(pool.imap(_job, jobs, chunksize=4), total=len(jobs),
                                                 desc=out_dir.name, mininterval=5,
                                                 disable=None if progress else True):
                acou_ark.write(utt, acou)
                ling_ark.write(utt, ling)
                phone_ark.write(utt, xp)
                durations[utt] = " ".join(map(str, dur.tolist()))
                phones[utt] = " ".join(names)
                for name, m in (("acou", acou), ("ling", ling), ("lingp", xp)):
                    shapes[name][utt] = f"{m.shape[0]},{m.shape[1]}"
    write_table(out_dir / "dur", durations)
    write_table(out_dir / "phones", phones)
    for name, table in shapes.items():
        write_table(out_dir / f"{name}_shape", table)
    write_table(out_dir / "utt2num_frames", {u: s.split(",")[0] for u, s in shapes["acou"].items()})
    with atomic_open(out_dir / "max_dur_frames") as f:
        f.write(f"{max_dur_frames}\n")
    return len(jobs)


class _Serial:
    """Pool stand-in for nj = 1 (no worker process)."""

    def imap(self, fn, items, chunksize=1):
        return map(fn, items)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def _iter_scp(scp) -> Iterator[Tuple[str, np.ndarray]]:
    import kaldiio

    for utt, path in read_table(scp).items():
        yield utt, np.asarray(kaldiio.load_mat(path))


def fit_stats(train_dump, questions: str, out_file, dur_out=None) -> None:
    """stats.npz from a train dump (one streamed pass over each ark); with DUR_OUT also the duration model's
    statistics there (`fit_duration_stats`)."""
    train_dump = Path(train_dump)
    acou = acoustic.RunningStats(acoustic.DIM)
    for _, m in _iter_scp(train_dump / "acou.scp"):
        acou.add(m)
    ling = None
    for _, m in _iter_scp(train_dump / "ling.scp"):
        ling = ling or acoustic.RunningStats(m.shape[1])
        ling.add(m)
    if ling is None:
        raise ValueError(f"{train_dump}/ling.scp: no utterances")
    mask = np.concatenate([linguistic.numeric_dims(_questions(str(questions))), [True, True]])
    if len(mask) != len(ling.sum):
        raise ValueError(f"{questions}: {len(mask) - 2} question dims + 2, but the dump has {len(ling.sum)} dims "
                         "(dumped with another question file? rerun stage 3)")
    mean, std = ling.mean_std()
    max_dur = int((train_dump / "max_dur_frames").read_text().split()[0])
    acoustic.save_stats(out_file, acoustic.MinMax(acou.lo, acou.hi), acoustic.ZNorm(mean, std, mask), max_dur)
    if dur_out is not None:
        fit_duration_stats(train_dump, questions, dur_out)


def read_durations(path) -> Dict[str, np.ndarray]:
    """utt -> frames per phone (int64) from a `dur` table (text_int)."""
    return {u: np.array(v.split(), dtype=np.int64) for u, v in read_table(path).items()}


def speech_masks(dump) -> Dict[str, np.ndarray]:
    """utt -> (T,) bool speech frames of a dump (acoustic.speech_frames from DUMP/dur and DUMP/phones, the reference
    labels' phones and frames per phone): the frames the paper's MCD keeps."""
    dump = Path(dump)
    for f in ("dur", "phones"):
        if not (dump / f).is_file():
            raise DataDirError(dump / f, None, "missing: the reference's silence frames are unknown; rerun stage 3")
    dur, phones = read_durations(dump / "dur"), read_table(dump / "phones")
    if set(dur) != set(phones):
        odd = sorted(set(dur) ^ set(phones))[0]
        raise DataDirError(dump / "phones", None, f"'{odd}' is in one of dur / phones only: rerun stage 3")
    return {u: acoustic.speech_frames(d, phones[u].split()) for u, d in dur.items()}


def fit_duration_stats(train_dump, questions: str, out_file) -> None:
    """dur_stats.npz: phone-level mean / std of the real-valued question dims (binary dims: 0 / 1) and mean /
    std of log(1 + frames), the duration model's normalised target."""
    from .duration import save_duration_stats

    train_dump = Path(train_dump)
    ling = None
    for _, m in _iter_scp(train_dump / "lingp.scp"):
        ling = ling or acoustic.RunningStats(m.shape[1])
        ling.add(m)
    if ling is None:
        raise ValueError(f"{train_dump}/lingp.scp: no utterances (dumped before the duration model? rerun stage 3)")
    mask = linguistic.numeric_dims(_questions(str(questions)))
    if len(mask) != len(ling.sum):
        raise ValueError(f"{questions}: {len(mask)} question dims, but {train_dump}/lingp.scp has {len(ling.sum)}")
    logd = np.log1p(np.concatenate(list(read_durations(train_dump / "dur").values())).astype(np.float64))
    mean, std = ling.mean_std()
    save_duration_stats(out_file, np.where(mask, mean, 0.0), np.where(mask, std, 1.0), float(logd.mean()),
                        float(max(logd.std(), 1e-3)))


def make_windows(train_dump, out_dir, streams: int = 32, window: int = 120) -> Tuple[int, int]:
    """The stateful train set; returns (windows per stream, frames dropped)."""
    import kaldiio

    train_dump, out_dir = Path(train_dump), Path(out_dir)
    frames = {u: int(n) for u, n in read_table(train_dump / "utt2num_frames").items()}
    total = sum(frames.values())
    piece = total // streams
    per_stream = piece // window
    if per_stream < 1:
        raise ValueError(f"{train_dump}: {total} frames cannot fill {streams} streams x 1 window of {window}")
    acou_scp, ling_scp = read_table(train_dump / "acou.scp"), read_table(train_dump / "ling.scp")
    out_dir.mkdir(parents=True, exist_ok=True)
    pos, shape_a, shape_l = {}, {}, {}
    buf_a, buf_l, start = [], [], 0  # buffered frames and the global index of the first one
    with ArkStream(out_dir / "acou") as wa, ArkStream(out_dir / "ling") as wl:
        for utt in sorted(frames, key=str.encode):
            buf_a.append(np.asarray(kaldiio.load_mat(acou_scp[utt])))
            buf_l.append(np.asarray(kaldiio.load_mat(ling_scp[utt])))
            a, l_ = np.concatenate(buf_a), np.concatenate(buf_l)
            while True:
                s, off = divmod(start, piece)
                b = off // window
                if s >= streams:
                    a = a[:0]
                    l_ = l_[:0]
                    break
                if b >= per_stream:  # tail of the piece: skip to the next piece
                    skip = min(piece - off, len(a))
                    a, l_, start = a[skip:], l_[skip:], start + skip
                    if skip == 0 or len(a) == 0:
                        break
                    continue
                if len(a) < window:
                    break
                key = f"w{b:06d}_s{s:03d}"
                wa.write(key, a[:window])
                wl.write(key, l_[:window])
                pos[key] = f"{b} {s}"
                shape_a[key], shape_l[key] = f"{window},{a.shape[1]}", f"{window},{l_.shape[1]}"
                a, l_, start = a[window:], l_[window:], start + window
            buf_a, buf_l = [a], [l_]
    write_table(out_dir / "pos", pos)
    write_table(out_dir / "acou_shape", shape_a)
    write_table(out_dir / "ling_shape", shape_l)
    return per_stream, total - streams * per_stream * window
