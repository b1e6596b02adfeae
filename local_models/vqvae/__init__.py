"""Transformer VQ-VAE for unsupervised unit discovery (paper 003, ZeroSpeech 2019 track).

Modules:
- `items`: ZeroSpeech/ABX ``.item`` files from phone alignments (writer and reader);
- `abx`: ZeroSpeech 2019 ABX error (across speaker, within triphone context, DTW over the
  angular distance), for continuous features and for discrete codes (one-hot or embeddings);
- `bitrate`: ZeroSpeech 2019 bitrate B = (N / D) * H;
- `abx_ref`: the same ABX condition through the `zerospeech-libriabx2` package, as a cross-check;
- `featio`: read features from kaldiio scp/ark or a directory of ``.npy`` files;
- `model`, `task`: the VQ-VAEs and the codebook inverter, and their ESPnet2 task;
- `inference`: codes of a data set (with its bitrate) and resynthesis through the inverter; `Speech2Units` /
  `Units2Speech` on raw audio / unit sequences from packed models (the speech-to-units / units-to-speech commands,
  whose file handling is in `unitsio`);
- `frontend`: the recipe's feature settings (one definition); `pack`: the recipe's pack stage (archives + cards);
- `demo`: the recipe demo's fresh input and summary;
- `report`: the recipe's results.json / RESULTS.md tables, checks and plot;
- `systems`: the system names, presets and paper rows (torch-free; stages.sh's `python -m` queries);
- `submission`: the ZeroSpeech 2019 track's submission directory, written and validated.
"""
