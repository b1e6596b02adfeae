# Recipe environment: the collection's venv, utils/ on PATH, thread counts, stage helpers (log, require, ...).
# (a work dir that links this file, e.g. exp/choose/<variant>/path.sh, finds the repository through the link)
MAIN_ROOT=${MAIN_ROOT:-$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../../.." && pwd)}
. "${MAIN_ROOT}/utils/env.sh"
