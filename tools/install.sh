#!/usr/bin/env bash
# Create tools/venv (Python 3.11) with the exact pins of tools/requirements*.txt and install the
# Debian packages the recipes need. Re-running when nothing changed returns in about a second.
# Usage: bash tools/install.sh [--force]      (env PYTHON=python3.11 to choose the interpreter)
set -euo pipefail
tools=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(dirname "${tools}")
venv=${tools}/venv
stamp=${venv}/.installed
force=false
case "${1:-}" in
    --force) force=true ;;
    -h|--help) sed -n '2,4p' "$0" | sed 's/^# //'; exit 0 ;;
    "") ;;
    *) echo "install.sh: unknown option $1 (see --help)" >&2; exit 1 ;;
esac

# gcc: pysptk and zerospeech-libriabx2 ship as sources and are compiled at install time
# fluidsynth ... sound-icons: the SAD recipe's built-in non-speech set (egs/fearless_steps/sad1/local/make_nonspeech_set.py)
debian_packages="espeak-ng libespeak-ng1 sox libsndfile1 gcc
    fluidsynth timgm6mb-soundfont sound-theme-freedesktop frozen-bubble-data sound-icons
    mu-cade-data pinball-data alienblaster-data"

install_debian() {
    local missing=()
    for p in ${debian_packages}; do
        dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        echo "install.sh: apt-get install ${missing[*]}"
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    else
        echo "install.sh: missing Debian packages: ${missing[*]}" >&2
        echo "  run as root:  apt-get install ${missing[*]}" >&2
        echo "  (the mini corpora need espeak-ng; continuing with the Python part)" >&2
    fi
}

# Everything that decides the venv's content; a change in any of it re-runs the pip part.
fingerprint() {
    cat "${tools}"/requirements*.txt "${tools}/constraints.txt" "${tools}/install.sh" "${root}/setup.py" \
        "${tools}/typecheck_switch.py" \
        | sha256sum | cut -d' ' -f1
}

install_debian
want=$(fingerprint)
if ! ${force} && [ -f "${stamp}" ] && [ "$(cat "${stamp}")" = "${want}" ]; then
    echo "install.sh: tools/venv is up to date"
    exit 0
fi

py=${PYTHON:-python3.11}
command -v "${py}" >/dev/null || py=python3
"${py}" -c 'import sys; assert sys.version_info[:2] == (3, 11), sys.version' 2>/dev/null || {
    echo "install.sh: need Python 3.11 (espnet==202511 + torch 2.9.1); '${py}' is $(${py} --version 2>&1)" >&2
    exit 1
}
[ -x "${venv}/bin/python" ] || "${py}" -m venv "${venv}"
pip="${venv}/bin/python -m pip --disable-pip-version-check"
rm -f "${stamp}"
# pip 25+ refuses espnet's dependency ci_sdr (direct-URL extra) and setuptools>=74 breaks the build of
# parallel-wavegan/pyworld: pin both first.
${pip} install -q -c "${tools}/constraints.txt" pip setuptools wheel
${pip} install -q -c "${tools}/constraints.txt" -r "${tools}/requirements-torch.txt"
${pip} install -q -c "${tools}/constraints.txt" -r "${tools}/requirements.txt"
# parallel-wavegan's setup.py imports pip: it cannot build in an isolated environment.
${pip} install -q --no-build-isolation -c "${tools}/constraints.txt" -r "${tools}/requirements-nobuild.txt"
${pip} install -q --no-build-isolation --no-deps -e "${root}"
# typeguard's import-time instrumentation off in every process of the venv (tools/typecheck_switch.py says why)
site=$("${venv}/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
cp "${tools}/typecheck_switch.py" "${site}/speech_recipes_typecheck.py"
echo "import speech_recipes_typecheck" > "${site}/speech_recipes_typecheck.pth"
${pip} check >/dev/null || { ${pip} check; echo "install.sh: pip check failed" >&2; exit 1; }
echo "${want}" > "${stamp}"
echo "install.sh: tools/venv ready ($(du -sh "${venv}" | cut -f1))"
