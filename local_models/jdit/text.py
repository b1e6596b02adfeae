"""The text side of egs/kss/tts1 (`python -m local_models.bin.jdit_text <subcommand>`): phoneme tokens of a data
dir (espeak-ng phonemes or jamo: `phonemes.TOKEN_TYPES`), the ESPnet token list, text shapes, and frames per token
from the mini corpus' true phone times (also with each stop's closure given to the stop). Messages and errors name
the file and line.
"""
from __future__ import annotations

import sys
from pathlib import Path

from local_models.common.datadir import DataDirError, atomic_open, iter_lines, read_table, write_table

from . import durations, g2p, phonemes


def g2p_data_dir(data_dir, unknown: str = "error", out_name: str = "text_phn", token_type: str = "espeak",
                 lang: str = "ko") -> int:
    """DATA_DIR/text -> DATA_DIR/<out_name> (`<utt> tok tok ...`, TOKEN_TYPE tokens of LANG); every bad line is
    reported (file:line) and the status is 1, nothing written. unknown="drop" drops characters with no reading in
    LANG (reported)."""
    d = Path(data_dir)
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
            out[utt] = phonemes.tokens_of(text, token_type, unknown=unknown, dropped=dropped, lang=lang)
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
    write_table(d / out_name, out)
    n_tok = sum(len(v) for v in out.values())
    print(f"jdit_text g2p: {d}: {len(out)} utterances, {n_tok} {token_type} tokens -> {d / out_name}",
          file=sys.stderr)
    return 0


def _read_token_table(path):
    return {utt: v.split() for utt, v in read_table(path).items()}


def check_token_type(path, token_seqs, token_type: str) -> None:
    """DataDirError when PATH's tokens were made by the other front end than TOKEN_TYPE (e.g. a text_phn of an
    earlier run with the other --token-type)."""
    found = phonemes.token_type_of({t for seq in token_seqs for t in seq})
    if found != token_type:
        raise DataDirError(path, None, f"holds {found} tokens, not {token_type} ones: rerun stage 3 (g2p) with "
                                       f"--token-type {token_type}, or pass --token-type {found}")


def write_token_list(text_phn, out, seen_only: bool = False, token_type: str = "espeak", lang: str = "ko") -> int:
    """ESPnet2 token list of a text_phn (g2p.token_list; the unseen rest of TOKEN_TYPE's inventory) -> OUT."""
    seqs = list(_read_token_table(text_phn).values())
    check_token_type(text_phn, seqs, token_type)
    tokens = g2p.token_list(seqs, full_inventory=not seen_only, inventory=phonemes.full_inventory(token_type, lang))
    seen = len(set(t for s in seqs for t in s))
    with atomic_open(out) as f:
        f.writelines(t + "\n" for t in tokens)
    print(f"jdit_text token-list: {len(tokens)} tokens ({seen} used in {text_phn}, "
          f"{len(tokens) - 3 - seen} more of the {token_type} inventory, <blank> <unk> <sos/eos>) -> {out}",
          file=sys.stderr)
    return 0


def write_shapes(text_phn, tokens, out) -> int:
    """ESPnet text shape file (`<utt> <num_tokens>,<vocab_size>`) of a text_phn -> OUT; DataDirError for a token
    not in TOKENS (it would silently become <unk>)."""
    vocab = Path(tokens).read_text(encoding="utf-8").split("\n")
    vocab = set(t for t in vocab if t)
    for lineno, line in iter_lines(text_phn):
        utt, *toks = line.split()
        unknown = sorted(set(toks) - vocab)
        if unknown:
            raise DataDirError(text_phn, lineno, f"utterance {utt}: tokens {' '.join(unknown)} are not in "
                                                 f"{tokens} (they would become <unk>)")
    table = _read_token_table(text_phn)
    write_table(out, {u: f"{len(t)},{len(vocab)}" for u, t in table.items()})
    return 0


def read_ctm_times(path: Path) -> dict:
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


def write_durations(data_dir, sample_rate: int = 22050, hop_length: int = 256, ctm: str = "phones.ctm",
                    out: str = "durations", token_type: str = "espeak") -> int:
    """DATA_DIR/{text_phn,<ctm>,utt2num_frames} -> DATA_DIR/<out>: frames per token from the true phone times:
    one to one for espeak-ng phoneme tokens (durations.event_frames), aligned for jamo (durations.token_frames)."""
    d = Path(data_dir)
    tokens = _read_token_table(d / "text_phn")
    check_token_type(d / "text_phn", tokens.values(), token_type)
    num_frames = {u: int(v) for u, v in read_table(d / "utt2num_frames").items()}
    times = read_ctm_times(d / ctm)
    line_of = {row.split(maxsplit=1)[0]: n for n, row in iter_lines(d / "text_phn")}
    table, cost, n_tok = {}, 0.0, 0
    for utt, toks in tokens.items():
        if utt not in times or utt not in num_frames:
            raise DataDirError(d / "text_phn", line_of[utt], f"utterance {utt} has no entry in "
                                                             f"{d / (ctm if utt not in times else 'utt2num_frames')}")
        if token_type == "espeak":
            try:
                frames, c = durations.event_frames(toks, times[utt], num_frames[utt], sample_rate, hop_length), 0.0
            except ValueError as e:
                raise DataDirError(d / "text_phn", line_of[utt], f"utterance {utt}: {e}") from None
        else:
            frames, c = durations.token_frames(toks, times[utt], num_frames[utt], sample_rate, hop_length)
        table[utt], cost, n_tok = frames, cost + c, n_tok + len(toks)
    write_table(d / out, table)
    how = ("one token per phone event" if token_type == "espeak" else
           f"jamo alignment cost {cost / max(1, n_tok):.3f} per token (0 = every espeak phone matched its jamo)")
    print(f"jdit_text durations: {d / ctm}: {len(table)} utterances, {how} -> {d / out}", file=sys.stderr)
    return 0


def write_closures(data_dir) -> int:
    """DATA_DIR/{wav.scp,phones.ctm} -> DATA_DIR/phones_closure.ctm: the same phone times with each stop's closure
    given to the stop (espeak-ng's events give it to the phone before; common.synth.closures_to_following)."""
    from local_models.common.audio import load_audio
    from local_models.common.synth import closures_to_following

    d = Path(data_dir)
    ctm, wavs = read_ctm_times(d / "phones.ctm"), read_table(d / "wav.scp")
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
