"""local_models/common/debian.py: pinned, sha256-checked Debian packages as data, offline (a fake apt-get serves a
.deb built here with dpkg-deb)."""
import os
import shutil
import subprocess
import sys

import pytest

from local_models.common import debian

needs_dpkg = pytest.mark.skipif(shutil.which("dpkg-deb") is None, reason="needs dpkg-deb")


def build_deb(tmp_path, name="demo-sounds", version="1:1.0-2"):
    """A real .deb with one data file, and its sha256."""
    src = tmp_path / "src"
    (src / "DEBIAN").mkdir(parents=True)
    (src / "usr" / "share" / name).mkdir(parents=True)
    (src / "usr" / "share" / name / "hello.txt").write_text("hola\n")
    (src / "DEBIAN" / "control").write_text(
        f"Package: {name}\nVersion: {version}\nArchitecture: all\nMaintainer: t <t@example.org>\nDescription: test\n")
    deb = tmp_path / "built.deb"
    subprocess.run(["dpkg-deb", "--build", "--root-owner-group", str(src), str(deb)], check=True, capture_output=True)
    return deb, debian.sha256_of(deb)


def fake_apt(tmp_path, deb, monkeypatch, fail=False):
    """apt-get on PATH that 'downloads' DEB (as apt names it) into its working directory, counting its calls."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "apt-get"
    calls = tmp_path / "apt_calls"
    body = ("echo 'E: Unable to locate package' >&2; exit 100" if fail else
            f'name=${{3%%=*}}; ver=${{3#*=}}; cp "{deb}" "${{name}}_${{ver/:/%3a}}_all.deb"')
    script.write_text(f"#!/bin/bash\necho \"$@\" >> {calls}\n{body}\n")
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    return calls


@needs_dpkg
def test_fetch_verify_unpack_once(tmp_path, monkeypatch):
    deb, sha = build_deb(tmp_path)
    calls = fake_apt(tmp_path, deb, monkeypatch)
    pkg = debian.Package("demo-sounds", "1:1.0-2", sha)
    assert pkg.deb_name == "demo-sounds_1%3a1.0-2_all.deb"
    cache = tmp_path / "cache"
    root = debian.unpacked(pkg, cache)
    assert (root / "usr/share/demo-sounds/hello.txt").read_text() == "hola\n"
    assert calls.read_text().split() == ["download", "-q", "demo-sounds=1:1.0-2"]
    assert debian.unpacked(pkg, cache) == root and len(calls.read_text().splitlines()) == 1  # cached: no download
    assert sorted(p.name for p in cache.iterdir()) == ["demo-sounds_1%3a1.0-2_all", "demo-sounds_1%3a1.0-2_all.deb"]


@needs_dpkg
def test_checksum_mismatch_is_an_error_and_leaves_nothing(tmp_path, monkeypatch):
    deb, sha = build_deb(tmp_path)
    fake_apt(tmp_path, deb, monkeypatch)
    cache = tmp_path / "cache"
    with pytest.raises(debian.DebianError, match=r"sha256 .* expected 0000000000000000\.\.\. for demo-sounds=1:1.0-2"):
        debian.fetch(debian.Package("demo-sounds", "1:1.0-2", "0" * 64), cache)
    assert [p for p in cache.iterdir()] == []
    # a damaged file in the cache (put there by hand) is refused and removed too
    (cache / "demo-sounds_1%3a1.0-2_all.deb").write_bytes(b"not a deb")
    with pytest.raises(debian.DebianError, match="a damaged download"):
        debian.fetch(debian.Package("demo-sounds", "1:1.0-2", sha), cache)
    assert not (cache / "demo-sounds_1%3a1.0-2_all.deb").exists()


def test_failed_download_names_the_manual_route(tmp_path, monkeypatch):
    fake_apt(tmp_path, tmp_path / "none.deb", monkeypatch, fail=True)
    with pytest.raises(debian.DebianError, match=r"apt-get download x-y=2 failed \(E: Unable to locate package\); "
                                                 r"on a machine with a Debian mirror: apt-get download x-y=2; then copy"):
        debian.fetch(debian.Package("x-y", "2", "0" * 64), tmp_path / "cache")


def test_reserved_packages_are_refused_unless_for_evaluation(tmp_path):
    for name in ("asterisk-core-sounds-en-wav", "alsa-utils"):
        with pytest.raises(debian.DebianError, match="reserved for evaluation"):
            debian.fetch(debian.Package(name, "1", "0" * 64), tmp_path)
    debian.check_allowed("asterisk-core-sounds-en-wav", "eval")


def test_cli_help_and_bad_pin():
    proc = subprocess.run([sys.executable, "-m", "local_models.common.debian", "--help"], capture_output=True, text=True)
    assert proc.returncode == 0 and "NAME=VERSION" in proc.stdout
    proc = subprocess.run([sys.executable, "-m", "local_models.common.debian", "codec2", "--sha256", "0"],
                          capture_output=True, text=True)
    assert proc.returncode == 2 and "'codec2' is not NAME=VERSION" in proc.stderr
