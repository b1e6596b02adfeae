#!/usr/bin/env bash
# Download the wheels the GPU machine (x86-64, Python 3.12, torch + torchaudio preinstalled, no package index) lacks
# for training / decoding: tools/device_wheels.txt's packages at tools/constraints.txt's versions, cp312 manylinux.
# Usage: bash tools/device_wheels.sh [--dest DIR] [--clean]   (default DIR tools/device_wheels/; env PYTHON)
set -euo pipefail
tools=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(dirname "${tools}")
dest=${tools}/device_wheels
list=${tools}/device_wheels.txt
constraints=${tools}/constraints.txt
clean=false
while [ $# -gt 0 ]; do
    case "$1" in
        --dest) dest=$(mkdir -p "$2" && cd "$2" && pwd); shift 2 ;;
        --clean) clean=true; shift ;;
        -h|--help) sed -n '2,4p' "$0" | sed 's/^# //'; exit 0 ;;
        *) echo "device_wheels.sh: unknown option $1 (see --help)" >&2; exit 1 ;;
    esac
done
command -v unzip >/dev/null || { echo "device_wheels.sh: needs unzip" >&2; exit 1; }

# Any pip can download wheels. Building the pure-Python sdists (parallel-wavegan's setup.py imports pip, so no
# build isolation) needs setuptools + wheel + pip in the interpreter: tools/venv has exactly install.sh's set.
py=${PYTHON:-}
if [ -z "${py}" ]; then
    if [ -x "${tools}/venv/bin/python" ]; then py=${tools}/venv/bin/python; else py=python3; fi
fi
pip="${py} -m pip --disable-pip-version-check"

# PEP 503 name: lower case, runs of - _ . as one -
norm() { echo "$1" | tr 'A-Z' 'a-z' | sed -E 's/[-_.]+/-/g'; }

# section of device_wheels.txt: names, comments and blank lines dropped
section() {
    awk -v want="[$1]" '/^\[/ {cur = $1; next} cur == want {sub(/#.*/, ""); if (NF) print $1}' "${list}"
}

carry=$(section carry)
not_needed=$(section not-needed)
preinstalled=$(section preinstalled)
[ -n "${carry}" ] || { echo "device_wheels.sh: ${list} has no [carry] names" >&2; exit 1; }
[ -n "${preinstalled}" ] || { echo "device_wheels.sh: ${list} has no [preinstalled] names" >&2; exit 1; }

# NAME==VERSION from constraints.txt (names compared PEP 503-normalised), or fail naming the package
pin() {
    local v
    v=$(awk -v want="$(norm "$1")" '
        { sub(/#.*/, ""); gsub(/[[:space:]]/, "") }
        /==/ { split($0, a, "=="); n = tolower(a[1]); gsub(/[-_.]+/, "-", n); if (n == want) { print a[2]; exit } }
    ' "${constraints}")
    if [ -z "${v}" ]; then
        echo "device_wheels.sh: tools/constraints.txt has no pin for '$1' (listed in tools/device_wheels.txt)" >&2
        return 1
    fi
    echo "$1==${v}"
}

specs=()
for p in ${carry}; do
    s=$(pin "$p") || exit 1
    specs+=("$s")
done
for p in ${carry}; do
    if grep -qxF "$(norm "$p")" <(for q in ${preinstalled}; do norm "$q"; done); then
        echo "device_wheels.sh: '$p' is both in [carry] and [preinstalled]: two versions stop the install there" >&2
        exit 1
    fi
done

mkdir -p "${dest}"
${clean} && rm -f "${dest}"/*.whl
work=$(mktemp -d)
trap 'rm -rf "${work}"' EXIT

# the name a wheel file carries (its first dash-separated field), normalised
whl_name() { norm "$(basename "$1" | cut -d- -f1)"; }
whl_version() { basename "$1" | cut -d- -f2; }
have_wheel() {  # NAME VERSION: a wheel of exactly that version is already in dest
    local f
    for f in "${dest}"/*.whl; do
        [ -e "$f" ] || continue
        [ "$(whl_name "$f")" = "$(norm "$1")" ] && [ "$(whl_version "$f")" = "$2" ] && return 0
    done
    return 1
}

# cp312 / abi3 manylinux wheels, and py3-none-any ones (pip accepts those with these flags)
platform_flags=(--only-binary=:all: --python-version 3.12 --implementation cp
                --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64
                --platform manylinux2014_x86_64 --platform manylinux1_x86_64)
not_carried=()
for s in "${specs[@]}"; do
    name=${s%%==*}
    ver=${s#*==}
    if have_wheel "${name}" "${ver}"; then
        echo "  have  ${s}"
        continue
    fi
    if ${pip} download -q --no-deps "${platform_flags[@]}" -d "${dest}" "${s}" >"${work}/log" 2>&1; then
        echo "  wheel ${s}"
        continue
    fi
    # No cp312 / py3 wheel on the index: an sdist. Carry it only if it is pure Python (no extension sources).
    rm -rf "${work}/sdist" && mkdir -p "${work}/sdist"
    if ! ${pip} download -q --no-deps --no-binary=:all: --no-build-isolation -d "${work}/sdist" "${s}" \
            >"${work}/log" 2>&1; then
        cat "${work}/log" >&2
        echo "device_wheels.sh: neither a cp312 wheel nor an sdist of ${s} could be downloaded" >&2
        exit 1
    fi
    sdist=$(ls "${work}"/sdist/* | head -1)
    case "${sdist}" in
        *.zip) members=$(unzip -Z1 "${sdist}") ;;
        *) members=$(tar -tf "${sdist}") ;;
    esac
    compiled=$(echo "${members}" | grep -E '\.(c|cc|cpp|cxx|pyx|f|f90|cu)$' | head -3 | tr '\n' ' ' || true)
    if [ -n "${compiled}" ]; then
        echo "  skip  ${s}: an sdist with compiled sources (${compiled% })"
        not_carried+=("${s}")
        continue
    fi
    rm -rf "${work}/built" && mkdir -p "${work}/built"
    if ! ${pip} wheel -q --no-deps --no-build-isolation -w "${work}/built" "${sdist}" >"${work}/log" 2>&1; then
        cat "${work}/log" >&2
        echo "device_wheels.sh: building the pure-Python sdist ${s} failed (interpreter ${py})" >&2
        exit 1
    fi
    built=$(ls "${work}"/built/*.whl)
    case "$(basename "${built}")" in
        *-none-any.whl) mv "${built}" "${dest}/"; echo "  built ${s} (pure-Python sdist)" ;;
        *) echo "  skip  ${s}: its wheel is not pure Python ($(basename "${built}"))"; not_carried+=("${s}") ;;
    esac
done

# Keep exactly one wheel per listed package: a stale version or an unlisted wheel would go along (pip stops on
# two versions of a name).
wanted=$(for s in "${specs[@]}"; do echo "$(norm "${s%%==*}") ${s#*==}"; done)
for f in "${dest}"/*.whl; do
    [ -e "$f" ] || continue
    if ! grep -qxF "$(whl_name "$f") $(whl_version "$f")" <<<"${wanted}"; then
        echo "  drop  $(basename "$f") (not in the list at this version)"
        rm -f "$f"
    fi
done

# Requires-Dist of each carried wheel (no extras; markers for CPython 3.12 on Linux x86-64) that neither the carried
# set nor the machine's image has. Those in [not-needed] or not carried (compiled) are expected; any other is a gap.
known=$( { for f in "${dest}"/*.whl; do whl_name "$f"; done; for q in ${preinstalled}; do norm "$q"; done; } | sort -u)
expected=$( { for q in ${not_needed}; do norm "$q"; done; for s in "${not_carried[@]}"; do norm "${s%%==*}"; done; } \
            | sort -u)
missing=$(for f in "${dest}"/*.whl; do
    unzip -p "$f" '*.dist-info/METADATA' | grep '^Requires-Dist:' | sed "s|^|$(whl_name "$f")\t|" || true
done | "${py}" -c '
import re, sys
from pip._vendor.packaging.requirements import Requirement
env = {"python_version": "3.12", "python_full_version": "3.12.3", "sys_platform": "linux", "platform_system": "Linux",
       "platform_machine": "x86_64", "os_name": "posix", "implementation_name": "cpython",
       "platform_python_implementation": "CPython", "platform_release": "", "platform_version": "", "extra": ""}
known = set(open(sys.argv[1]).read().split())
for line in sys.stdin:
    owner, req = line.rstrip("\n").split("\t", 1)
    r = Requirement(req.split(":", 1)[1].strip())
    if r.marker is not None and not r.marker.evaluate(env):
        continue  # an extra, or another Python / platform
    name = re.sub(r"[-_.]+", "-", r.name.lower())
    if name not in known:
        print(f"{name}\t{owner} requires {r}")
' <(echo "${known}") | sort -u)
gaps=$(awk -F'\t' 'NR == FNR {e[$1]; next} !($1 in e) {print $2}' <(echo "${expected}") <(echo "${missing}"))
left=$(awk -F'\t' 'NR == FNR {e[$1]; next} ($1 in e) {print $2}' <(echo "${expected}") <(echo "${missing}"))

n=$(ls "${dest}"/*.whl 2>/dev/null | wc -l)
echo
total=$(cat "${dest}"/*.whl | wc -c)
echo "device_wheels.sh: ${n} wheels, $(awk -v b="${total}" 'BEGIN {printf "%.1f MB (%.1f MiB)", b / 1e6, b / 1048576}') in" \
     "${dest#"${root}"/}"
for f in "${dest}"/*.whl; do
    printf '  %7.0f kB  %s\n' "$(awk -v b="$(wc -c <"$f")" 'BEGIN {print b / 1e3}')" "$(basename "$f")"
done
if [ ${#not_carried[@]} -gt 0 ]; then
    echo
    echo "Not carried (sdists with compiled code, no cp312 wheel; what needs them: tools/device_wheels.txt):"
    for s in "${not_carried[@]}"; do echo "  ${s}"; done
fi
echo
if [ -n "${left}" ]; then
    echo "Requirements left behind on purpose ([not-needed] or not carried; the install there is --no-deps):"
    echo "${left}" | sed 's/^/  /'
fi
if [ -n "${gaps}" ]; then
    echo "GAPS: requirements of carried wheels that neither the set nor the GPU image has (add them to [carry], or"
    echo "to [not-needed] if no GPU entry point imports them):"
    echo "${gaps}" | sed 's/^/  /'
else
    echo "No gaps: every other requirement of the carried wheels is carried or preinstalled."
fi
echo
echo "On the GPU machine, in the repository root with ${dest#"${root}"/}/ copied along (it is git-ignored):"
echo "  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site" \
     "${dest#"${root}"/}/*.whl && export PYTHONPATH=/tmp/site:\$PWD"
