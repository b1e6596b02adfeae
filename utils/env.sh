# Recipe environment, sourced by egs/<corpus>/<task>/path.sh after it sets MAIN_ROOT.
# Activates tools/venv, puts utils/ on PATH, makes the collection importable, pins thread counts.
if [ ! -x "${MAIN_ROOT}/tools/venv/bin/python" ]; then
    echo "path.sh: ${MAIN_ROOT}/tools/venv is missing: run 'make install' (bash tools/install.sh) in ${MAIN_ROOT}" >&2
    return 1 2>/dev/null || exit 1
fi
export MAIN_ROOT
export VIRTUAL_ENV="${MAIN_ROOT}/tools/venv"
export PATH="${MAIN_ROOT}/utils:${VIRTUAL_ENV}/bin:${PATH}"
export PYTHONPATH="${MAIN_ROOT}${PYTHONPATH:+:${PYTHONPATH}}"
export PYTHONUTF8=1 PYTHONIOENCODING=UTF-8
# Data-dir tables are sorted in byte order; sort/join in shell stages must agree.
export LC_ALL=C
# One BLAS/OpenMP thread per process: parallelism comes from nj jobs; raise for a single big job.
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1} MKL_NUM_THREADS=${MKL_NUM_THREADS:-1}
export OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-1} NUMEXPR_NUM_THREADS=${NUMEXPR_NUM_THREADS:-1}
export TQDM_MININTERVAL=${TQDM_MININTERVAL:-5}
. "${MAIN_ROOT}/utils/stage_lib.sh"
if [ "$(command -v python)" != "${VIRTUAL_ENV}/bin/python" ]; then
    echo "path.sh: 'python' is $(command -v python), expected ${VIRTUAL_ENV}/bin/python" >&2
    return 1 2>/dev/null || exit 1
fi
