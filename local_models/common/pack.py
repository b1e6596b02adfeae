"""Packed models: one archive per trained system, in ESPnet's pack layout (`espnet2.main_funcs.pack_funcs`:
meta.yaml naming every file by key; yaml files whose paths are rewritten on unpacking), plus a model card.

    pack_model(out, paper=, system=, recipe_dir=, files=, yaml_files=, card=)  -> the archive (written atomically)
    load_model(path, paper=, exp_resolver=)  -> PackedModel(files, card, root): path is an archive, an unpacked
                                                archive or a recipe exp dir

An archive unpacks into a content-addressed cache dir (SPEECH_RECIPES_CACHE, default ~/.cache/speech_recipes), once;
a half-finished unpack is never seen by another process (extracted beside, then renamed). A later load finds the
cache dir by the archive's sha256, remembered by path, size and mtime (it reads a large archive only when it changed). Every member but ESPnet's
meta.yaml is listed with its sha256 in checksums.sha256 (`sha256sum` format); unpacking checks each member read
from the archive against it first (before ESPnet rewrites the yaml files' paths), so a flipped bit never loads.
"""
from __future__ import annotations

import contextlib
import datetime
import hashlib
import json
import os
import shutil
import tarfile
import tempfile
import time
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Callable, Dict, Mapping, Optional, Union

import yaml

from .results import git_commit

PathLike = Union[str, Path]
CARD_KEY = "model_card"
CARD_NAME = "model_card.yaml"
CHECKSUM_KEY = "checksums"
CHECKSUM_NAME = "checksums.sha256"
PAPERS = {  # card["paper"] -> what a user reads in an error
    "sad": "Fearless Steps SAD (egs/fearless_steps/sad1)",
    "multisoftmax": "multi-softmax RNN-T (egs/indic/asr1)",
    "jdit": "JDI-T (egs/kss/tts1)",
    "salad": "SALAD / MUSA-RNN (egs/tcstar/tts1)",
    "vqvae": "Transformer VQ-VAE (egs/zerospeech2019/unit1)",
}


from .errors import PackError  # noqa: E402,F401  (defined beside cli's other error classes)


@dataclass
class PackedModel:
    files: Dict[str, Path]  # key -> file (config, model_file, stats_file, token_list, ... as the paper names them)
    card: dict = field(default_factory=dict)
    root: Optional[Path] = None

    def file(self, key: str) -> Path:
        if key not in self.files:
            raise PackError(f"{self.root}: the model has no '{key}' (it has: {', '.join(sorted(self.files))})")
        return self.files[key]


# ----------------------------------------------------------------------------- packing
# what reading a damaged tar / zip raises (a flipped bit in a zip's compression-method field: NotImplementedError;
# in deflated data: zlib.error)
CORRUPT = (tarfile.TarError, zipfile.BadZipFile, EOFError, OSError, NotImplementedError, zlib.error)

def _stage_name(src: Path, recipe_dir: Path) -> str:
    """Member name of SRC: its path relative to the recipe (so the yaml files' recipe-relative paths still match and
    ESPnet's unpack rewrites them), else resources/<name> for files from elsewhere (e.g. the repo's front-end data)."""
    try:
        return src.resolve().relative_to(recipe_dir.resolve()).as_posix()
    except ValueError:
        return f"resources/{src.name}"


def _link_or_copy(src: Path, dst: Path) -> None:
    dst.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(src.resolve(), dst)  # resolved: os.link would hard-link a symlink itself (ESPnet's *.best.pth)
    except OSError:
        shutil.copy2(src, dst)


def model_card(paper: str, system: str, recipe_dir: PathLike, card: Mapping) -> dict:
    """The card: what the model is, what it was trained on, how well it did (card's 'metrics' from results.json)."""
    return {"paper": paper, "paper_name": PAPERS[paper], "system": system, **dict(card),
            "commit": git_commit(recipe_dir), "packed": datetime.date.today().isoformat()}


def pack_model(out: PathLike, *, paper: str, system: str, recipe_dir: PathLike, files: Mapping[str, PathLike],
               yaml_files: Mapping[str, PathLike] = (), card: Mapping = ()) -> Path:
    """Pack FILES and YAML_FILES ({key: path}) with a model card into OUT (.tar.gz or .zip), all or nothing."""
    from espnet2.main_funcs.pack_funcs import pack

    if paper not in PAPERS:
        raise ValueError(f"unknown paper '{paper}' ({', '.join(PAPERS)})")
    recipe_dir, out = Path(recipe_dir), Path(out).resolve()
    yaml_files, files = dict(yaml_files or {}), dict(files or {})
    for key, src in {**yaml_files, **files}.items():
        if not Path(src).is_file():
            raise FileNotFoundError(f"pack {paper}/{system}: '{key}' file {src} does not exist")
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=out.parent, prefix=".pack.") as stage:
        stage = Path(stage)
        staged = {}
        for kind, group in (("yaml", yaml_files), ("file", files)):
            for key, src in group.items():
                name = _stage_name(Path(src), recipe_dir)
                _link_or_copy(Path(src), stage / name)
                staged[(kind, key)] = name
        card = model_card(paper, system, recipe_dir, card)
        (stage / CARD_NAME).write_text(yaml.safe_dump(card, allow_unicode=True, sort_keys=False), encoding="utf-8")
        staged[("yaml", CARD_KEY)] = CARD_NAME
        (stage / CHECKSUM_NAME).write_text(
            "".join(f"{_sha256(stage / n)}  {n}\n" for n in sorted(set(staged.values()))), encoding="utf-8")
        staged[("file", CHECKSUM_KEY)] = CHECKSUM_NAME
        tmp = stage / ("archive" + "".join(out.suffixes))
        with contextlib.chdir(stage), contextlib.redirect_stdout(open(os.devnull, "w")):
            pack(files={k: n for (kind, k), n in staged.items() if kind == "file"},
                 yaml_files={k: n for (kind, k), n in staged.items() if kind == "yaml"}, outpath=tmp.name)
        os.replace(tmp, out)
    return out


# ----------------------------------------------------------------------------- loading
def cache_root() -> Path:
    return Path(os.environ.get("SPEECH_RECIPES_CACHE") or Path.home() / ".cache" / "speech_recipes")


def _one_line(e: Exception) -> str:
    return " ".join(str(e).split())  # yaml / tar errors span lines; a user's error is one line


def _sha256_of(stream) -> str:
    h = hashlib.sha256()
    for block in iter(lambda: stream.read(1 << 20), b""):
        h.update(block)
    return h.hexdigest()


def _sha256(path: Path) -> str:
    with open(path, "rb") as f:
        return _sha256_of(f)


def _digest(path: Path) -> str:
    return _sha256(path)[:16]


MEMO_TRUST_S = 2.0  # a file changed this soon before its memo was written may have kept its mtime: hash it again


def _archive_digest(archive: Path) -> str:
    """_digest(ARCHIVE), remembered in the cache by path, size and mtime so a second load does not read a large
    archive whole. As git does with its index ("racy clean"), a memo written within MEMO_TRUST_S of the file's mtime
    is not trusted (a rewrite in the same clock tick keeps size and mtime), so an edited archive is always rehashed."""
    st = archive.stat()
    memo = cache_root() / "digests" / (hashlib.sha1(str(archive.resolve()).encode()).hexdigest() + ".json")
    try:
        m = json.loads(memo.read_text(encoding="utf-8"))
        if (m["size"], m["mtime_ns"]) == (st.st_size, st.st_mtime_ns) and \
                m["written"] - st.st_mtime >= MEMO_TRUST_S:
            return m["digest"]
    except (OSError, ValueError, KeyError, TypeError):
        pass
    digest = _digest(archive)
    with contextlib.suppress(OSError):  # a read-only cache only costs the next load a hash
        memo.parent.mkdir(parents=True, exist_ok=True)
        tmp = memo.with_name(f".{memo.name}.{os.getpid()}")
        tmp.write_text(json.dumps({"size": st.st_size, "mtime_ns": st.st_mtime_ns, "written": time.time(),
                                   "digest": digest, "path": str(archive)}), encoding="utf-8")
        os.replace(tmp, memo)
    return digest


def _parse_checksums(text: str, where: str) -> Dict[str, str]:
    """{member name: sha256} of a checksums.sha256 text; PackError naming the line when a line is not `HEX  NAME`."""
    sums = {}
    for i, line in enumerate(text.splitlines(), 1):
        digest, sep, name = line.partition("  ")
        if not sep or len(digest) != 64 or not name or any(c not in "0123456789abcdef" for c in digest):
            raise PackError(f"{where}:{i}: not a `sha256  member` line")
        sums[name] = digest
    return sums


def _open_members(archive: Path):
    """(name, binary stream) of each plain file in ARCHIVE (a zip or tar), in archive order."""
    if zipfile.is_zipfile(archive):
        with zipfile.ZipFile(archive) as z:
            for info in z.infolist():
                if not info.is_dir():
                    with z.open(info) as f:
                        yield info.filename, f
    else:
        with tarfile.open(archive) as t:
            for m in t:
                if m.isfile():
                    yield m.name, t.extractfile(m)


def verify_members(archive: PathLike, names: Optional[list] = None) -> None:
    """PackError unless every member ARCHIVE's checksums.sha256 lists is there with that sha256 (one line naming the
    first member that differs); NAMES: its member names when already listed. Nothing is written."""
    archive = Path(archive)
    names = _member_names(archive) if names is None else names
    if "meta.yaml" not in names:
        raise PackError(f"{archive}: corrupt archive (no meta.yaml: not a packed model)")
    if CHECKSUM_NAME not in names:
        raise PackError(f"{archive}: no {CHECKSUM_NAME}: packed without member checksums (by an older version of "
                        "this collection?); repack it with the recipe's pack stage")
    digests = {}
    try:
        for name, f in _open_members(archive):
            digests[name] = f.read().decode("utf-8") if name == CHECKSUM_NAME else _sha256_of(f)
    except (*CORRUPT, UnicodeDecodeError) as e:
        raise PackError(f"{archive}: corrupt archive ({_one_line(e)})") from None
    for name, want in _parse_checksums(digests.pop(CHECKSUM_NAME), f"{archive}:{CHECKSUM_NAME}").items():
        if name not in digests:
            raise PackError(f"{archive}: member {name} is missing (listed in {CHECKSUM_NAME})")
        if digests[name] != want:
            raise PackError(f"{archive}: member {name} is corrupt (sha256 {digests[name][:12]}..., "
                            f"packed as {want[:12]}...)")


def _member_names(archive: Path):
    """Names in ARCHIVE; PackError when it is not a readable tar/zip or a name would land outside the target."""
    try:
        if zipfile.is_zipfile(archive):
            with zipfile.ZipFile(archive) as z:
                names = z.namelist()
        elif tarfile.is_tarfile(archive):
            with tarfile.open(archive) as t:
                members = t.getmembers()
            if any(not (m.isfile() or m.isdir()) for m in members):
                raise PackError(f"{archive}: holds links or devices; a model archive holds plain files only")
            names = [m.name for m in members]
        else:
            raise PackError(f"{archive}: not a model archive (neither tar nor zip)")
    except CORRUPT as e:
        raise PackError(f"{archive}: corrupt archive ({_one_line(e)})") from None
    for name in names:
        p = PurePosixPath(name)
        if p.is_absolute() or ".." in p.parts:
            raise PackError(f"{archive}: member '{name}' would unpack outside its directory")
    return names


def _read_meta(root: Path, where: PathLike) -> Dict[str, Path]:
    meta = root / "meta.yaml"
    if not meta.is_file():
        raise PackError(f"{where}: no meta.yaml: not a packed model (make one with the recipe's pack stage)")
    try:
        d = yaml.safe_load(meta.read_text(encoding="utf-8"))
        entries = {**d["yaml_files"], **d["files"]}
    except (yaml.YAMLError, KeyError, TypeError) as e:
        raise PackError(f"{meta}: unreadable meta.yaml ({_one_line(e)})") from None
    files = {k: root / v for k, v in entries.items()}
    missing = [f"{k} ({p.name})" for k, p in files.items() if not p.is_file()]
    if missing:
        raise PackError(f"{where}: incomplete model, missing {', '.join(missing)}")
    return files


def unpack_archive(archive: PathLike) -> Path:
    """ARCHIVE unpacked into the cache (once); returns its directory."""
    archive = Path(archive)
    target = cache_root() / _archive_digest(archive)
    if (target / "meta.yaml").is_file():  # unpacked and verified by an earlier load
        return target
    from espnet2.main_funcs.pack_funcs import unpack  # only to unpack: a warm load imports no ESPnet

    names = _member_names(archive)
    verify_members(archive, names)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}."))
    try:
        try:
            unpack(archive, tmp, use_cache=False)
        except (RuntimeError, *CORRUPT, yaml.YAMLError) as e:
            raise PackError(f"{archive}: corrupt archive ({_one_line(e)})") from None
        # ESPnet rewrites the yaml files' member paths to absolute ones under tmp: make them point at the target
        for y in tmp.rglob("*.yaml"):
            text = y.read_text(encoding="utf-8")
            if str(tmp) in text:
                y.write_text(text.replace(str(tmp), str(target)), encoding="utf-8")
        try:
            os.rename(tmp, target)
        except OSError:  # another process finished first
            if not (target / "meta.yaml").is_file():
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return target


def check_paper(card: Mapping, paper: str, where: PathLike) -> None:
    got = card.get("paper")
    if got != paper:
        what = PAPERS.get(got, repr(got))
        raise PackError(f"{where}: this is a {what} model, not a {PAPERS[paper]} model")


def load_model(path: PathLike, *, paper: str,
               exp_resolver: Optional[Callable[[Path], Dict[str, Path]]] = None) -> PackedModel:
    """A packed model of PAPER from PATH: an archive (.tar.gz / .zip), an unpacked archive dir, or (with
    EXP_RESOLVER, which maps an exp dir to its files) a recipe's exp/<system> dir. Raises PackError / FileNotFoundError."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"model not found: {path}")
    if path.is_file():
        root = unpack_archive(path)
    elif (path / "meta.yaml").is_file():
        root = path
    elif exp_resolver is not None:
        files = {k: Path(v) for k, v in exp_resolver(path).items()}
        missing = [f"{k} ({v})" for k, v in files.items() if not v.is_file()]
        if missing:
            raise PackError(f"{path}: not a trained {PAPERS[paper]} exp dir, missing {', '.join(missing)}")
        return PackedModel(files, {"paper": paper, "system": path.name, "exp_dir": str(path)}, path)
    else:
        raise PackError(f"{path}: neither a model archive nor an unpacked one (no meta.yaml)")
    files = _read_meta(root, path)
    if CARD_KEY not in files:
        raise PackError(f"{path}: no model card: not packed by this collection")
    files.pop(CHECKSUM_KEY, None)
    card = yaml.safe_load(files.pop(CARD_KEY).read_text(encoding="utf-8")) or {}
    check_paper(card, paper, path)
    return PackedModel(files, card, root)


def read_card(path: PathLike) -> Optional[dict]:
    """The model card of an archive or unpacked archive at PATH (None for an exp dir, which has none)."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"model not found: {path}")
    if path.is_dir() and not (path / "meta.yaml").is_file():
        return None
    root = unpack_archive(path) if path.is_file() else path
    files = _read_meta(root, path)
    if CARD_KEY not in files:
        raise PackError(f"{path}: no model card: not packed by this collection")
    return yaml.safe_load(files[CARD_KEY].read_text(encoding="utf-8")) or {}
