# parse_options.sh: Kaldi-style command-line option parsing for bash recipes.
#
# Source it (with no arguments) after the defaults, in a script that may run
# under `set -euo pipefail`:
#     stage=1
#     nj=4
#     use_gpu=false
#     . parse_options.sh        # utils/ is on PATH after `. ./path.sh`
#
# Sourced without arguments it shares (and shifts) the caller's "$@":
#   --foo-bar VALUE | --foo-bar=VALUE | --foo_bar VALUE
#                       set the existing variable foo_bar (error if it was not
#                       set before this file is sourced); if its value is
#                       true/false, VALUE must be true or false.
#   --config FILE       source FILE (name=value lines) before the other options
#                       (may be repeated; --config=FILE also works).
#   --help | -h         print the script's header comment block and its options
#                       with their current values, then exit 0.
# A recipe whose stages live in a shared stage script (local_models/<paper>/stages.sh) sources that script
# first; it appends itself to the array `option_files`, and --help then also prints that file's header and
# its top-level NAME=value lines (the stage options) after the recipe's own.
# Parsing stops at the first argument not starting with "--" (or at "--", which
# is removed); the remaining positional arguments stay in "$@".
# Errors print "<script>: ..." to stderr and exit 1.

__po_prog=$(basename -- "$0")
# the script's file for --help: recipes `cd "$(dirname "$0")"` before sourcing this, so a relative $0 such as
# egs/kss/tts1/run.sh no longer names it; then it is ./run.sh
__po_file=$0
[ -f "${__po_file}" ] || __po_file=./${__po_prog}

__po_die() {
    echo "${__po_prog}: $*" >&2
    echo "${__po_prog}: run '${__po_prog} --help' for the list of options" >&2
    exit 1
}

# __po_header FILE: the comment block after FILE's shebang (first line)
__po_header() {
    local line n=0
    while IFS= read -r line || [ -n "${line}" ]; do
        n=$((n + 1))
        if [ "${n}" -eq 1 ] && [[ "${line}" == '#!'* ]]; then
            continue
        fi
        if [[ "${line}" == '#'* ]]; then
            line=${line#\#}
            line=${line# }
            echo "${line}"
        else
            break
        fi
    done < "$1"
}

# __po_options FILE: one line per settable variable of FILE (top-level NAME=... lines, up to the line sourcing
# this file), with its current value; a name already shown (${shown}) is skipped
__po_options() {
    local line name var
    while IFS= read -r line || [ -n "${line}" ]; do
        if [[ "${line}" =~ ^[[:space:]]*(\.|source)[[:space:]]+([^[:space:]]*/)?parse_options\.sh ]]; then
            break
        fi
        if [[ "${line}" =~ ^([A-Za-z_][A-Za-z0-9_]*)= ]]; then
            var=${BASH_REMATCH[1]}
            case "${shown}" in *" ${var} "*) continue ;; esac
            shown+="${var} "
            [ -n "${!var+x}" ] || continue
            name=${var//_/-}
            if [ -n "${!var}" ]; then
                printf '  --%-24s # default: %s\n' "${name}" "${!var}"
            else
                printf "  --%-24s # default: ''\n" "${name}"
            fi
        fi
    done < "$1"
}

__po_help() {
    local shown=" " f
    if [ -f "${__po_file}" ]; then
        __po_header "${__po_file}"
        for f in ${option_files[@]+"${option_files[@]}"}; do
            echo
            __po_header "${f}"
        done
        echo
        echo "Usage: ${__po_prog} [options] [args...]"
        echo "Options:"
        __po_options "${__po_file}"
        for f in ${option_files[@]+"${option_files[@]}"}; do
            __po_options "${f}"
        done
    else
        echo "Usage: ${__po_prog} [options] [args...]"
    fi
    echo "  --config FILE              # source FILE (name=value lines) first"
    echo "  --help, -h                 # show this message"
}

# Pass 1: --config FILE, sourced before everything else (options on the command
# line override what the config sets).
__po_args=("$@")
__po_i=0
while [ "${__po_i}" -lt "${#__po_args[@]}" ]; do
    __po_a=${__po_args[${__po_i}]}
    case "${__po_a}" in
        --) break ;;
        --config)
            if [ $((__po_i + 1)) -ge "${#__po_args[@]}" ]; then
                __po_die "option --config requires a value (a file of name=value lines)"
            fi
            __po_i=$((__po_i + 1))
            __po_cfg=${__po_args[${__po_i}]}
            ;;
        --config=*) __po_cfg=${__po_a#--config=} ;;
        --*=*) __po_i=$((__po_i + 1)); continue ;;
        --help | -h) __po_i=$((__po_i + 1)); continue ;;
        --*) __po_i=$((__po_i + 2)); continue ;;
        *) break ;;
    esac
    if [ ! -f "${__po_cfg}" ]; then
        __po_die "--config: no such file: ${__po_cfg}"
    fi
    # shellcheck disable=SC1090
    . "${__po_cfg}"
    __po_i=$((__po_i + 1))
done
unset __po_args __po_i __po_a __po_cfg

# Pass 2: the options themselves; shifts the caller's "$@".
while [ $# -gt 0 ]; do
    case "$1" in
        --)
            shift
            break
            ;;
        --help | -h)
            __po_help
            exit 0
            ;;
        --config)
            shift
            [ $# -gt 0 ] && shift
            continue
            ;;
        --config=*)
            shift
            continue
            ;;
        --*=*)
            __po_opt=${1%%=*}
            __po_val=${1#*=}
            shift
            ;;
        --*)
            __po_opt=$1
            if [ $# -lt 2 ]; then
                __po_die "option ${__po_opt} requires a value"
            fi
            __po_val=$2
            shift 2
            ;;
        *)
            break
            ;;
    esac
    __po_name=${__po_opt#--}
    __po_name=${__po_name//-/_}
    if ! [[ "${__po_name}" =~ ^[A-Za-z_][A-Za-z0-9_]*$ ]] || [ -z "${!__po_name+x}" ]; then
        __po_die "invalid option ${__po_opt} (no variable '${__po_name}' is defined before parse_options.sh)"
    fi
    __po_old=${!__po_name}
    if [ "${__po_old}" = true ] || [ "${__po_old}" = false ]; then
        if [ "${__po_val}" != true ] && [ "${__po_val}" != false ]; then
            __po_die "option ${__po_opt} is boolean: expected true or false, got '${__po_val}'"
        fi
    fi
    printf -v "${__po_name}" '%s' "${__po_val}"
done

unset __po_opt __po_val __po_name __po_old __po_prog __po_file
unset -f __po_die __po_help __po_header __po_options
true
