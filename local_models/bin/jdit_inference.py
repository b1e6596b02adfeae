"""Synthesise mel spectrograms with a trained JDI-T (or any ESPnet2 TTS model) through ESPnet2's tts_inference:
`python -m local_models.bin.jdit_inference --train_config exp/x/config.yaml --model_file exp/x/valid.loss.best.pth
--data_path_and_name_and_type data/test/text_phn,text,text --output_dir exp/x/decode_test`.

Imports local_models.jdit.task first so that `tts: jdit` in config.yaml can be built (DESIGN.md section 3).
All options are espnet2.bin.tts_inference's (`--help`)."""
import local_models.jdit.task  # noqa: F401  (registers tts: jdit)
from espnet2.bin.tts_inference import main as _tts_inference_main


def main(cmd=None):
    _tts_inference_main(cmd)


if __name__ == "__main__":
    main()
