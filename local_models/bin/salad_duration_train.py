"""Train the MUSA duration model (phone-level linguistic vectors -> frames per phone, a unidirectional LSTM) with
ESPnet2's trainer: `python -m local_models.bin.salad_duration_train <espnet args>`.

Imports local_models.salad.duration_task so that its model registry (lstm) exists in this process and in every
process ESPnet spawns (docs/espnet2.md). All options are ESPnet's (`--help`)."""
from local_models.salad.duration_task import DurationTask


def main(cmd=None):
    DurationTask.main(cmd=cmd)


if __name__ == "__main__":
    main()
