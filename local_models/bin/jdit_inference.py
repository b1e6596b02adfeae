"""Synthesise mel spectrograms with a trained JDI-T (or any ESPnet2 TTS model) through ESPnet2's tts_inference:
`python -m local_models.bin.jdit_inference --train_config exp/x/config.yaml --model_file exp/x/valid.loss.best.pth
--data_path_and_name_and_type data/test/text_phn,text,text --output_dir exp/x/decode_test`.

Imports local_models.jdit.task first so that `tts: jdit` in config.yaml can be built (docs/espnet2.md).
All options are espnet2.bin.tts_inference's (`--help`), plus the spelling --model-file of its --model_file, as
the recipe's other decoding tools take it. --ngpu is checked first: `--ngpu 1` without a GPU is a clear error
(ESPnet would fail deep inside torch); any N >= 1 decodes on one GPU, as the other tools do."""
import argparse
import sys

from local_models.common.device import device_of


def main(cmd=None):
    pre = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    pre.add_argument("--ngpu", type=int, default=0)
    pre.add_argument("--model-file", "--model_file", dest="model_file")
    known, rest = pre.parse_known_args(sys.argv[1:] if cmd is None else list(cmd))
    try:
        device_of(known.ngpu)
    except ValueError as e:
        sys.exit(f"jdit_inference: {e}")
    if known.model_file is not None:
        rest += ["--model_file", known.model_file]

    import local_models.jdit.task  # noqa: F401  (registers tts: jdit)
    from espnet2.bin.tts_inference import main as _tts_inference_main

    _tts_inference_main(rest + ["--ngpu", str(min(known.ngpu, 1))])


if __name__ == "__main__":
    main()
