"""local_models/common/compat.py: the shims for pinned packages (parallel-wavegan's scipy name, g2p_en's downloads)."""
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
