"""Installed into tools/venv by tools/install.sh (as speech_recipes_typecheck.py + a .pth line, so it runs at
every interpreter start): typeguard's @typechecked becomes a no-op, as it is under `python -O`.

Why: ESPnet, inflect (through g2p_en) and our tasks decorate about 160 functions with @typechecked, and typeguard 4
instruments each one at import time by re-parsing and re-compiling its whole module: 10-11 s of every process that
imports an ESPnet task on a 2-core machine (19 s -> 8 s for `import local_models.sad.task`). typeguard's own
documentation meant these checks for development, not for production runs; a recipe starts hundreds of such
processes. Nothing else changes: asserts stay, results are identical.

The switch waits for typeguard's first import (a finder on sys.meta_path patches the module as it loads): importing
typeguard eagerly here cost every Python process of the venv about 0.3 s at start-up, --help included.

SPEECH_RECIPES_TYPECHECK=1 in the environment keeps the run-time type checks (what a developer hunting a type bug
wants).
"""
import importlib.abc
import importlib.machinery
import os
import sys


def _typechecked(target=None, **_options):
    """typeguard.typechecked under -O: the target unchanged (also as @typechecked(...) with options)."""
    return (lambda t: t) if target is None else target


def _switch_off(typeguard) -> None:
    import typeguard._decorators  # loaded by typeguard's __init__ already

    typeguard.typechecked = typeguard._decorators.typechecked = _typechecked


class _TypeguardSwitch(importlib.abc.MetaPathFinder):
    """Finds typeguard as the path finder would, and switches @typechecked off right after the module runs."""

    def find_spec(self, name, path=None, target=None):
        if name != "typeguard":
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return spec  # not installed: nothing to switch off
        run = spec.loader.exec_module

        def exec_module(module):
            run(module)
            _switch_off(module)
            if self in sys.meta_path:
                sys.meta_path.remove(self)

        spec.loader.exec_module = exec_module
        return spec


if os.environ.get("SPEECH_RECIPES_TYPECHECK", "0") in ("", "0"):
    if "typeguard" in sys.modules:  # imported before the .pth ran (not the usual order): patch it now
        _switch_off(sys.modules["typeguard"])
    else:
        sys.meta_path.insert(0, _TypeguardSwitch())
