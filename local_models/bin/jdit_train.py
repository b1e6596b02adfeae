"""Train JDI-T (or any ESPnet2 TTS model) with ESPnet2's TTS task and trainer:
`python -m local_models.bin.jdit_train <espnet2 tts args>`.

Imports local_models.jdit.task so that `tts: jdit` is a known model in this process and in every process
ESPnet spawns (docs/espnet2.md); see that module for the data options of precomputed features.
All options are ESPnet2's TTSTask ones (`--help`)."""
from local_models.jdit.task import JDITTask


def main(cmd=None):
    JDITTask.main(cmd=cmd)


if __name__ == "__main__":
    main()
