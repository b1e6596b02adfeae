#!/usr/bin/env bash
# On a GPU machine with no package index (Python 3.12, torch preinstalled): make tools/venv from the machine's
# python3 plus the wheels of tools/device_wheels.sh (gathered on a machine with an index, carried over), so that
# the recipes' path.sh and benchmarks/gpu_check.py run there as they do after `make install`.
# Usage: bash tools/device_venv.sh [--wheels DIR] [--python PY]   (default DIR tools/device_wheels/, PY python3)
# tools/venv/bin/python is then a wrapper: the machine's interpreter (its torch, numpy, ...) with the wheels,
# installed --no-deps into tools/venv/site, first on its path. Nothing outside tools/venv is touched.
set -euo pipefail
tools=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
wheels=${tools}/device_wheels
py=python3
while [ $# -gt 0 ]; do
    case "$1" in
        --wheels) wheels=$2; shift 2 ;;
        --python) py=$2; shift 2 ;;
        -h|--help) sed -n '2,7p' "$0" | sed 's/^# //'; exit 0 ;;
        *) echo "device_venv.sh: unknown option $1 (see --help)" >&2; exit 1 ;;
    esac
done
# not resolved through links: a venv's python (the GPU image's torch lives in one) must stay that venv's
real_py=$(command -v "${py}") || { echo "device_venv.sh: no '${py}' on PATH" >&2; exit 1; }
real_py=$(cd "$(dirname "${real_py}")" && pwd)/$(basename "${real_py}")
"${real_py}" -c 'import torch' 2>/dev/null || { echo "device_venv.sh: ${real_py} has no torch" >&2; exit 1; }
ls "${wheels}"/*.whl >/dev/null 2>&1 || {
    echo "device_venv.sh: no wheels in ${wheels}: run 'bash tools/device_wheels.sh' where pip reaches PyPI" >&2; exit 1; }
venv=${tools}/venv
if [ -e "${venv}/.installed" ]; then
    echo "device_venv.sh: ${venv} is a full install (make install): left alone" >&2; exit 1
fi
rm -rf "${venv}.tmp"
mkdir -p "${venv}.tmp/bin"
"${real_py}" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target "${venv}.tmp/site" \
    "${wheels}"/*.whl
# the wrapper: the wheels first on the path, then whatever the caller (path.sh) put there
# pyworld / pysptk are compiled sdists (no cp312 wheel to carry): a stand-in that fails on first use, so that ESPnet's
# TTS task (it imports pyworld at the top) loads; WORLD analysis / synthesis then fail with this message
for m in pyworld pysptk; do
    "${real_py}" -c "import ${m}" 2>/dev/null || PYTHONPATH="${venv}.tmp/site" "${real_py}" -c "import ${m}" 2>/dev/null || {
        mkdir -p "${venv}.tmp/site/${m}"
        printf 'def __getattr__(name):\n    raise ImportError("%s is not installed on this machine (device_venv.sh: no wheel)")\n' \
            "${m}" > "${venv}.tmp/site/${m}/__init__.py"
        echo "device_venv.sh: ${m} missing: a stand-in that raises on use" >&2
    }
done
cat > "${venv}.tmp/bin/python" <<EOF
#!/usr/bin/env bash
export PYTHONPATH="${venv}/site\${PYTHONPATH:+:\${PYTHONPATH}}"
exec "${real_py}" "\$@"
EOF
chmod +x "${venv}.tmp/bin/python"
ln -s python "${venv}.tmp/bin/python3"
rm -rf "${venv}"
mv "${venv}.tmp" "${venv}"
# what the GPU check runs: every recipe's task and decoding tool (a missing module shows here, not minutes into it)
PYTHONPATH="$(dirname "${tools}")" "${venv}/bin/python" -c '
import importlib, torch
for m in ("local_models.sad.task", "local_models.multisoftmax.task", "local_models.jdit.task",
          "local_models.salad.task", "local_models.vqvae.task", "espnet2.tasks.tts", "local_models.bin.sad_decode",
          "local_models.bin.multisoftmax_decode", "local_models.bin.jdit_synth", "local_models.bin.jdit_align",
          "local_models.bin.salad_decode", "local_models.bin.vqvae_extract", "local_models.bin.vqvae_resynth",
          "local_models.bin.jdit_pwg_train"):
    importlib.import_module(m)
print("device_venv.sh: tools/venv ready: torch", torch.__version__, "cuda", torch.cuda.is_available())'

