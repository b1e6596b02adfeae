"""speech-segments: where people speak in a recording, by a packed SAD system of egs/fearless_steps/sad1 (CNN / RNN /
segment RNN with its dev-tuned HMM, median or segment decision, their majority vote, or the statistical SAD).
Any sample rate (resampled to 8 kHz), mono or multi-channel; long files are read --chunk_s seconds at a time.

    speech-segments meeting.wav                          # the model shipped with the package
    speech-segments --min_silence_ms 300 --speech_pad_ms 30 --json out.json meeting.wav
    speech-segments --model exp/seg_rnn/packed/model.tar.gz rec1.wav rec2.flac
    speech-segments -m exp/cnn_hmm/packed/model.tar.gz --rttm out.rttm --segments out.segments day.wav

Prints `<file> <start_s> <end_s>` per speech region, each file's as soon as it is done, or writes RTTM / Kaldi
segments / JSON files (recording id = the file's name without its suffix), written once, after the last file, so an
error leaves nothing half-written. A progress line per file goes to stderr (`[3/10] a.wav: 62.1 s in 3.05 s, RTF
0.049`). --keep_going: a file that fails is named on stderr and skipped, the others are done and written (the output
files hold them alone: empty if none was), and the exit status is 2.
"""
import argparse
import sys

from local_models.common.cli import (InputLoop, add_keep_going_arg, add_model_args, check_output_file, results,
                                     run_main, set_threads)

# local_models.sad.decisions.FA_BOUND, for the help text only: importing decisions loads numpy and kaldiio, which
# `speech-segments --help` must not wait for (tests/test_lean_help.py checks the two are equal)
FA_BOUND = 0.10


def get_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="speech-segments", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("audio", nargs="+", help="audio files (wav/flac/ogg/mp3, any sample rate)")
    add_model_args(p, "a packed SAD system", default="the model shipped in local_models/sad/pretrained/")
    p.add_argument("--rttm", help="write the speech regions of every file to this RTTM file")
    p.add_argument("--segments",
                   help="write them as a Kaldi segments file (<rec>-<start cs>-<end cs> <rec> <start> <end>)")
    p.add_argument("--json", help="write them as JSON: {file: [[start_s, end_s], ...]}")
    p.add_argument("--threshold", type=float,
                   help="the system's decision threshold instead of its dev-tuned one (a neural system's speech "
                        "posterior; not for the majority vote)")
    p.add_argument("--min_speech_ms", type=float, default=0.0,
                   help="drop speech regions shorter than this, after bridging (default: %(default)s)")
    p.add_argument("--min_silence_ms", type=float, default=0.0,
                   help="bridge pauses shorter than this (default: %(default)s)")
    p.add_argument("--speech_pad_ms", type=float, default=0.0,
                   help="widen each region by this on both sides (default: %(default)s)")
    p.add_argument("--chunk_s", type=float, default=60.0,
                   help="read and decide this many seconds at a time (bounded memory; progress bar per file); "
                        "0: each file in one pass (default: %(default)s)")
    p.add_argument("--context_s", type=float, default=None,
                   help="chunked decoding: seconds of context around a chunk for the systems that look at the whole "
                        "recording (default: 6 for rnn_*, 10 for stat_sad); the CNN and segment-RNN systems need none")
    p.add_argument("--operating_point", choices=("dcf", "fa_bounded"), default="dcf",
                   help="dcf: the threshold tuned on dev for the lowest DCF (the paper's; it weighs a miss 3x a false "
                        "alarm, so music and tones often pass as speech); fa_bounded: the lowest dev DCF among the "
                        f"thresholds that call at most {FA_BOUND * 100:.0f} %% of dev's music and tone time speech (the kinds dev has) "
                        "(fewer false alarms on music and tones, more misses; not in every model) "
                        "(default: %(default)s)")
    add_keep_going_arg(p)
    return p


def main(argv=None) -> int:
    args = get_parser().parse_args(argv)
    for out in (args.rttm, args.segments, args.json):  # before any work: not an unwritable output found after an hour
        if out:
            check_output_file(out)
    if args.chunk_s < 0:  # before any work: with --keep_going it would be every file's error
        raise ValueError(f"--chunk_s must be >= 0, got {args.chunk_s}")
    from local_models.sad.inference import SpeechSegmenter, recording_ids, segment_files, write_speech

    if args.device == "cpu" and args.threads > 0:  # the nets run in numpy on the CPU: its BLAS's threads, no torch
        from threadpoolctl import threadpool_limits

        threadpool_limits(args.threads)
    else:
        set_threads(args.threads)
    recs = dict(zip(args.audio, recording_ids(args.audio)))  # before any work: one id for two files would collide
    segmenter = SpeechSegmenter.from_pretrained(args.model, device=args.device, context_s=args.context_s,
                                                operating_point=args.operating_point, threshold=args.threshold,
                                                min_speech_ms=args.min_speech_ms, min_silence_ms=args.min_silence_ms,
                                                speech_pad_ms=args.speech_pad_ms)
    to_files = args.rttm or args.segments or args.json
    loop = InputLoop(args.audio, "speech-segments", args.keep_going)
    speech = {}
    for path, segs in loop.run(lambda path: segment_files(segmenter, [path], [recs[path]], args.chunk_s)[recs[path]]):
        speech[recs[path]] = segs
        if not to_files:
            results().write("".join(f"{path} {start:.2f} {end:.2f}\n" for start, end in segs))
            results().flush()
    if to_files:  # reached only with every file done, or --keep_going: then empty if none was (no stale file)
        write_speech(speech, rttm=args.rttm, segments=args.segments, json_file=args.json,
                     names={rec: str(path) for path, rec in recs.items()})
    return loop.exit_code


def cli() -> int:
    return run_main(main, prog="speech-segments")


if __name__ == "__main__":
    sys.exit(cli())
