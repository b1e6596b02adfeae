"""Debian packages as data: recorded speech, music and sounds that stage 1 of a recipe fetches at data preparation
(`apt-get download`, a pinned version, sha256-checked), unpacks once into a cache and never commits.

    pkg = Package("codec2-examples", "1.0.5-1", "<sha256 of the .deb>")
    root = unpacked(pkg)                      # <cache>/codec2-examples_1.0.5-1/ (the package's files, e.g. usr/share)
    wavs = sorted(root.glob("usr/share/codec2/raw/*.raw"))

The cache is SPEECH_RECIPES_DEBIAN (default ~/.cache/speech_recipes/debian). A .deb put there by hand (from a
machine that can reach a Debian mirror: `apt-get download NAME=VERSION`) is used as it is, after its sha256 check;
nothing is downloaded when the cache holds it. A half-finished download or unpack is never seen (written beside,
then renamed). Reserved for evaluation and never fetched for training or tuning: Debian's asterisk sound packages
and alsa-utils' recorded noise (RESERVED).
"""
from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Sequence

RESERVED_PREFIXES = ("asterisk-",)  # asterisk-core-sounds-*, asterisk-moh-*, ...: evaluation only
RESERVED = ("alsa-utils",)


class DebianError(RuntimeError):
    """A package that cannot be had: no apt-get, a failed download, a checksum mismatch, a bad archive."""


@dataclass(frozen=True)
class Package:
    name: str
    version: str
    sha256: str
    arch: str = "all"

    @property
    def deb_name(self) -> str:
        """The file name `apt-get download` writes (an epoch's colon is written %3a)."""
        return f"{self.name}_{self.version.replace(':', '%3a')}_{self.arch}.deb"

    @property
    def pin(self) -> str:
        return f"{self.name}={self.version}"


def cache_root() -> Path:
    return Path(os.environ.get("SPEECH_RECIPES_DEBIAN") or Path.home() / ".cache" / "speech_recipes" / "debian")


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def check_allowed(name: str, purpose: str = "train") -> None:
    """DebianError for a package reserved for evaluation, unless PURPOSE is 'eval'."""
    if purpose != "eval" and (name in RESERVED or name.startswith(RESERVED_PREFIXES)):
        raise DebianError(f"{name} is reserved for evaluation: never used to train, tune or test")


def _manual(pkg: Package, cache: Path) -> str:
    return f"on a machine with a Debian mirror: apt-get download {pkg.pin}; then copy {pkg.deb_name} into {cache}"


def _verify(pkg: Package, deb: Path) -> None:
    got = sha256_of(deb)
    if got != pkg.sha256:
        raise DebianError(f"{deb}: sha256 {got[:16]}..., expected {pkg.sha256[:16]}... for {pkg.pin} "
                          "(a different build or a damaged download; the file was removed)")


def fetch(pkg: Package, cache: Optional[Path] = None, purpose: str = "train") -> Path:
    """PKG's .deb in the cache, sha256-checked; downloaded by `apt-get download` when absent."""
    check_allowed(pkg.name, purpose)
    cache = Path(cache or cache_root())
    deb = cache / pkg.deb_name
    if deb.is_file():
        try:
            _verify(pkg, deb)
        except DebianError:
            deb.unlink()
            raise
        return deb
    if shutil.which("apt-get") is None:
        raise DebianError(f"{pkg.pin}: not in {cache} and apt-get is not available; {_manual(pkg, cache)}")
    cache.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=cache, prefix=".download.") as tmp:
        proc = subprocess.run(["apt-get", "download", "-q", pkg.pin], cwd=tmp, capture_output=True, text=True)
        got = Path(tmp) / pkg.deb_name
        if proc.returncode != 0 or not got.is_file():
            why = " ".join((proc.stderr or proc.stdout).strip().splitlines()[-2:])
            raise DebianError(f"apt-get download {pkg.pin} failed ({why or 'no file written'}); {_manual(pkg, cache)}")
        _verify(pkg, got)
        os.replace(got, deb)
    return deb


def unpacked(pkg: Package, cache: Optional[Path] = None, purpose: str = "train") -> Path:
    """The directory PKG's files are unpacked into (`dpkg-deb -x`), once; fetched first when needed."""
    cache = Path(cache or cache_root())
    root = cache / pkg.deb_name[: -len(".deb")]
    if (root / ".complete").is_file():
        check_allowed(pkg.name, purpose)
        return root
    deb = fetch(pkg, cache, purpose)
    if shutil.which("dpkg-deb") is None:
        raise DebianError(f"{deb}: dpkg-deb is not available to unpack it (Debian package dpkg)")
    tmp = Path(tempfile.mkdtemp(dir=cache, prefix=f".{root.name}."))
    try:
        proc = subprocess.run(["dpkg-deb", "-x", str(deb), str(tmp)], capture_output=True, text=True)
        if proc.returncode != 0:
            raise DebianError(f"{deb}: dpkg-deb -x failed ({' '.join(proc.stderr.split())})")
        (tmp / ".complete").write_text(f"{pkg.pin} {pkg.sha256}\n")
        shutil.rmtree(root, ignore_errors=True)  # an unfinished earlier unpack
        os.rename(tmp, root)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return root


def get_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m local_models.common.debian", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("pin", metavar="NAME=VERSION", help="the package and its pinned version")
    p.add_argument("--sha256", required=True, help="the .deb's sha256")
    p.add_argument("--arch", default="all", help="the .deb's architecture (default: %(default)s)")
    p.add_argument("--cache", help="cache directory (default: SPEECH_RECIPES_DEBIAN or ~/.cache/speech_recipes/debian)")
    p.add_argument("--purpose", choices=("train", "eval"), default="train",
                   help="eval: allow the packages reserved for evaluation (default: %(default)s)")
    return p


def main(argv: Optional[Sequence[str]] = None) -> int:
    a = get_parser().parse_args(argv)
    name, sep, version = a.pin.partition("=")
    if not sep or not name or not version:
        print(f"debian: '{a.pin}' is not NAME=VERSION", file=sys.stderr)
        return 2
    try:
        print(unpacked(Package(name, version, a.sha256, a.arch), Path(a.cache) if a.cache else None, a.purpose))
    except DebianError as e:
        print(f"debian: error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
