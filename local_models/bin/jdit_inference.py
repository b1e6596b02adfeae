"""Synthesise mel spectrograms with a trained JDI-T (or any ESPnet2 TTS model) through ESPnet2's tts_inference:
`python -m local_models.bin.jdit_inference --train_config exp/x/config.yaml --model_file exp/x/valid.loss.best.pth
--data_path_and_name_and_type data/test/text_phn,text,text --output_dir exp/x/decode_test`.

Imports local_models.jdit.task first so that `tts: jdit` in config.yaml can be built (docs/espnet2.md).
All options are espnet2.bin.tts_inference's (`--help`), plus the spelling --model-file of its --model_file, as
the recipe's other decoding tools take it. --ngpu is checked first: `--ngpu 1` without a GPU is a clear error
(ESPnet would fail deep inside torch); any N >= 1 decodes on one GPU, as the other tools do.

--durations_only true (with --use_teacher_forcing true and the speech): only <output_dir>/durations/durations (and
focus_rates/focus_rates), as tts_inference writes them, from the same ESPnet2 Text2Speech and data iterator, without
tts_inference's attention and stop-probability figures: one per utterance with a panel per layer and head, about
3 s an utterance on a CPU, when FastSpeech's teacher pass over a training set needs the durations alone."""
import argparse
import sys
from pathlib import Path

from local_models.common.datadir import atomic_open
from local_models.common.device import device_of


def write_durations(text2speech, data_path_and_name_and_type, output_dir) -> int:
    """tts_inference's durations/durations and focus_rates/focus_rates of every utterance (its iterator, one
    utterance a batch), written whole or not at all; returns the number of utterances."""
    from espnet2.tasks.tts import TTSTask

    loader = TTSTask.build_streaming_iterator(
        data_path_and_name_and_type, dtype="float32", batch_size=1, key_file=None, num_workers=0,
        preprocess_fn=TTSTask.build_preprocess_fn(text2speech.train_args, False),
        collate_fn=TTSTask.build_collate_fn(text2speech.train_args, False), allow_variable_data_keys=False,
        inference=True)
    out = Path(output_dir)
    n = 0
    with atomic_open(out / "durations" / "durations") as dur, atomic_open(out / "focus_rates" / "focus_rates") as foc:
        for keys, batch in loader:
            batch = {k: v[0] for k, v in batch.items() if not k.endswith("_lengths")}
            output = text2speech(**batch)
            if output.get("duration") is None:
                raise SystemExit(f"jdit_inference: {keys[0]}: the model gave no durations (teacher forcing of an "
                                 "attention model needs --use_teacher_forcing true and the speech)")
            dur.write(f"{keys[0]} " + " ".join(map(str, output["duration"].long().cpu().numpy())) + "\n")
            foc.write(f"{keys[0]} {float(output['focus_rate']):.5f}\n")
            n += 1
    return n


def durations_only(args, ngpu: int) -> None:
    """--durations_only: tts_inference's model and options (those durations need), durations written alone."""
    from espnet2.bin.tts_inference import Text2Speech
    from espnet2.torch_utils.set_all_random_seed import set_all_random_seed

    p = argparse.ArgumentParser(prog="jdit_inference --durations_only true", allow_abbrev=False)
    p.add_argument("--train_config", required=True)
    p.add_argument("--model_file", required=True)
    p.add_argument("--data_path_and_name_and_type", type=lambda x: tuple(x.split(",")), action="append",
                   required=True)
    p.add_argument("--output_dir", required=True)
    p.add_argument("--use_teacher_forcing", choices=("true",), required=True)
    p.add_argument("--seed", type=int, default=0)
    opts = p.parse_args(args)
    # tts_inference's order: the seed, then the model (the Transformer's prenet drops out at inference too, so the
    # durations depend on the random state; the same order gives the same durations)
    set_all_random_seed(opts.seed)
    tts = Text2Speech(train_config=opts.train_config, model_file=opts.model_file,
                      device="cuda" if ngpu > 0 else "cpu", use_teacher_forcing=True, seed=opts.seed)
    n = write_durations(tts, opts.data_path_and_name_and_type, opts.output_dir)
    print(f"jdit_inference: durations of {n} utterances -> {opts.output_dir}/durations/durations", file=sys.stderr)


def main(cmd=None):
    pre = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    pre.add_argument("--ngpu", type=int, default=0)
    pre.add_argument("--model-file", "--model_file", dest="model_file")
    pre.add_argument("--durations_only", "--durations-only", choices=("true", "false"), default="false")
    known, rest = pre.parse_known_args(sys.argv[1:] if cmd is None else list(cmd))
    try:
        device_of(known.ngpu)
    except ValueError as e:
        sys.exit(f"jdit_inference: {e}")
    if known.model_file is not None:
        rest += ["--model_file", known.model_file]

    import local_models.jdit.task  # noqa: F401  (registers tts: jdit)
    from espnet2.bin.tts_inference import main as _tts_inference_main

    if known.durations_only == "true":
        return durations_only(rest, known.ngpu)

    _tts_inference_main(rest + ["--ngpu", str(min(known.ngpu, 1))])


if __name__ == "__main__":
    main()
