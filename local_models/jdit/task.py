"""ESPnet2 plug-in of JDI-T (docs/espnet2.md): `tts: jdit` in ESPnet's own TTS task.

ESPnet2 picks TTS models through the module-level ClassChoices `espnet2.tasks.tts.tts_choices`, which has no
plug-in entry point; importing this module adds `jdit` to its `classes` dict (in place, no fork of espnet).
Everything that builds a TTS model by name sees it afterwards: TTSTask.main (training, also in the DDP worker
processes, which import the entry point module again), TTSTask.build_model_from_file and
espnet2.bin.tts_inference.Text2Speech. Import it before any of those (the argparse `--tts` choices are read
when the parser is built): `python -m local_models.bin.jdit_train` / `jdit_inference` do.

Data (egs/kss/tts1 stages 2-3), precomputed features as ESPnet's recipes feed them when feats_type != raw:
  --odim 80                                        (no feats_extract: the data loader gives the features)
  --train_data_path_and_name_and_type data/train/feats.scp,speech,kaldi_ark
  --train_data_path_and_name_and_type data/train/text_phn,text,text
  --train_shape_file dump/train/feats.shape --train_shape_file dump/train/text_shape.phn
  --token_list data/token_list/phn/tokens.txt --token_type phn --g2p none --cleaner none
With --odim set, TTSTask.build_model sets feats_extract to None and ESPnetTTSModel passes `speech` through
as feats, after `normalize: global_mvn` (normalize_conf.stats_file: dump/train/feats_stats.npz).
text_phn holds space-separated tokens, so the phn tokenizer with g2p none just splits them.
"""
from __future__ import annotations

from local_models.common.compat import lean_espnet_imports

lean_espnet_imports()  # before espnet2: g2p_en without nltk downloads, rarely used modules deferred (common/compat)

from espnet2.tasks.tts import TTSTask, tts_choices  # noqa: E402

from local_models.common.espnet_task import TrainingHooks  # noqa: E402

from .model import JDIT  # noqa: E402

NAME = "jdit"


def register() -> None:
    """Add JDIT to ESPnet2's TTS model choices (idempotent)."""
    current = tts_choices.classes.get(NAME)
    if current is not None and current is not JDIT:
        raise RuntimeError(f"espnet2 tts_choices already has a different '{NAME}': {current}")
    tts_choices.classes[NAME] = JDIT


register()


class JDITTask(TrainingHooks, TTSTask):
    """ESPnet2's TTSTask; importing this module is what makes `tts: jdit` known. One option more, --g2p_lang:
    the language of the front end that made text_phn (phonemes.LANGS). Training ignores it (the tokens are
    given); ESPnet writes it into config.yaml, where inference (and the packed model) read it, so typed text
    goes through the same front end."""

    @classmethod
    def add_task_arguments(cls, parser):
        super().add_task_arguments(parser)
        from .phonemes import LANGS  # noqa: E402  (espeak-ng is loaded lazily: importing is cheap)

        group = parser.add_argument_group(description="JDI-T front end")
        group.add_argument("--g2p_lang", default="ko", choices=LANGS,
                           help="language of the phoneme front end of text_phn (local_models.jdit.phonemes)")


__all__ = ["JDITTask", "JDIT", "register"]
