# Recipe environment: the collection's venv, utils/ on PATH, thread counts, stage helpers (log, require, ...).
MAIN_ROOT=${MAIN_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)}
. "${MAIN_ROOT}/utils/env.sh"
