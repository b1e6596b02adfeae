# Recipe environment: the collection's venv, utils/ on PATH, thread counts, stage helpers (log, require, ...).
MAIN_ROOT=${MAIN_ROOT:-$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../../.." && pwd)}  # a link finds it too
. "${MAIN_ROOT}/utils/env.sh"
