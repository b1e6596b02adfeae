"""local_models/common/compat.py: the shims for pinned packages (parallel-wavegan's scipy name, g2p_en's downloads,
ESPnet modules deferred to first use)."""
import subprocess
import sys

from tests.recipe_runner import ROOT

_PROBE = """
import sys
from local_models.common.compat import no_nltk_downloads
no_nltk_downloads()
import espnet2.text.phoneme_tokenizer as pt  # imports g2p_en at module level
print("after import:", "nltk" in sys.modules, "scipy.signal" in sys.modules)
g2p = pt.g2p_en.G2p  # first use: the real g2p_en, with nltk.download switched off
import nltk
print("after use:", g2p.__module__, nltk.download("cmudict"))
"""


def test_g2p_en_is_imported_on_first_use_without_downloads():
    out = subprocess.run([sys.executable, "-c", _PROBE], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert "after import: False False" in out  # neither nltk (about 1 s) nor scipy.signal (1.3 s) at start-up
    assert "after use: g2p_en.g2p False" in out  # the real module, and a download is a no-op returning False


def test_parallel_wavegan_needs_only_the_kaiser_alias():
    from local_models.common.compat import import_parallel_wavegan_models

    import scipy.signal
    models = import_parallel_wavegan_models()
    assert scipy.signal.kaiser is scipy.signal.windows.kaiser and hasattr(models, "ParallelWaveGANGenerator")


_PROBES = """
import inspect, sys
from local_models.common.compat import no_nltk_downloads
no_nltk_downloads()
import g2p_en
inspect.stack(); hasattr(g2p_en, "__wrapped__")
print("probed:", "nltk" in sys.modules)
from g2p_en import G2p
real = sys.modules["g2p_en"]
print("loaded:", hasattr(g2p_en, "missing"), sys.modules["g2p_en"] is real, g2p_en.G2p is G2p)
"""


def test_placeholder_survives_probes_and_loads_once():
    """inspect / hasattr's dunder look-ups do not import g2p_en; after the first real use the placeholder is a
    plain copy (a miss is an AttributeError, not a second import)."""
    out = subprocess.run([sys.executable, "-c", _PROBES], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert "probed: False" in out and "loaded: False True True" in out


def test_a_submodule_import_loads_g2p_en_with_downloads_off():
    probe = ("import sys\nfrom local_models.common.compat import no_nltk_downloads\nno_nltk_downloads()\n"
             "import g2p_en.g2p\nimport nltk\nprint('sub:', g2p_en.g2p.__name__, nltk.download('x'))")
    out = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert "sub: g2p_en.g2p False" in out


_DEFERRED_PROBE = """
import sys
from local_models.common.compat import lean_espnet_imports
lean_espnet_imports()
import local_models.common.espnet_task
import espnet2.train.trainer as trainer, espnet2.train.collate_fn as collate
heavy = ("scipy.stats", "scipy.signal", "librosa", "numba", "espnet2.gan_tts.jets")
print("start-up:", [m for m in heavy if m in sys.modules])
import numpy as np
speech = np.zeros(1600, dtype=np.float32)
speech[400:800] = np.random.default_rng(0).normal(size=400)
found = collate.detect_non_silence(speech)  # the first call: the real module is imported now
from espnet2.train.preprocessor import detect_non_silence as real
print("silence:", found.sum() == real(speech).sum() > 0, real.__module__)
import espnet2.train
print("loaded:", sys.modules["espnet2.train.preprocessor"].__file__ == real.__globals__["__file__"],
      espnet2.train.preprocessor.detect_non_silence is real, "librosa" in sys.modules)
print("attentions:", trainer.calculate_all_attentions.__name__, "espnet2.gan_tts.jets" in sys.modules)
"""


def test_rarely_used_espnet_modules_load_on_first_use():
    """lean_espnet_imports(): a task module's import leaves ESPnet's JETS aligner and preprocessor (scipy.stats,
    scipy.signal, librosa, numba) unimported; the first call of what was imported from them runs the real code."""
    proc = subprocess.run([sys.executable, "-c", _DEFERRED_PROBE], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = proc.stdout
    assert "start-up: []" in out
    assert "silence: True espnet2.train.preprocessor" in out
    assert "loaded: True True True" in out  # the real module took the placeholder's place, the parent's attribute too
    assert "attentions: calculate_all_attentions False" in out  # not called: still deferred


def test_a_deferred_module_that_fails_to_import_stays_deferred(tmp_path):
    (tmp_path / "flaky_mod.py").write_text("import os\nif os.environ.get('BREAK'): raise ImportError('broken')\n"
                                           "def f(x):\n    return x + 1\n")
    probe = ("import os, sys\nfrom local_models.common.compat import defer_module\ndefer_module('flaky_mod', ['f'])\n"
             "from flaky_mod import f\nos.environ['BREAK'] = '1'\n"
             "try:\n    f(1)\nexcept ImportError as e:\n    print('first:', e)\n"
             "del os.environ['BREAK']\nprint('second:', f(1), sys.modules['flaky_mod'].f(2))\n")
    out = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True,
                         env={**__import__("os").environ, "PYTHONPATH": f"{ROOT}:{tmp_path}"}).stdout
    assert "first: broken" in out and "second: 2 3" in out
