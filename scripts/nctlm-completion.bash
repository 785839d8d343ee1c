# bash completion for nctlm: commands, options, testbench names, shipped platforms/workloads and
# every key --set accepts (from `nctlm describe --keys`, i.e. the field lists themselves).
# Installed as share/bash-completion/completions/nctlm; or: source scripts/nctlm-completion.bash
_nctlm() {
    local cur prev cmd
    cur=${COMP_WORDS[COMP_CWORD]}
    prev=${COMP_WORDS[COMP_CWORD-1]}
    cmd=${COMP_WORDS[1]}
    local bin=${COMP_WORDS[0]}
    if [ "$COMP_CWORD" -eq 1 ]; then
        COMPREPLY=($(compgen -W "run sweep sensitivity uncertainty validate calibrate describe testbenches plot paths --version --help" -- "$cur"))
        return
    fi
    case "$prev" in
        -t|--testbench)
            COMPREPLY=($(compgen -W "$("$bin" testbenches 2>/dev/null | cut -d' ' -f1)" -- "$cur")); return ;;
        -p|--platform)
            COMPREPLY=($(compgen -f -- "$cur") $(compgen -W "trn1 trn2 tiny" -- "$cur")); return ;;
        -w|--workload|-o|--stats-json|--trace)
            COMPREPLY=($(compgen -f -- "$cur")); return ;;
        --timing)
            COMPREPLY=($(compgen -W "at lt flow" -- "$cur")); return ;;
        -s|--set)
            compopt -o nospace 2>/dev/null
            COMPREPLY=($(compgen -W "$("$bin" describe --keys 2>/dev/null | sed 's/$/=/')" -- "$cur")); return ;;
    esac
    case "$cmd" in
        describe)
            COMPREPLY=($(compgen -W "all --keys --schema platform dma noc hbm pe host $("$bin" testbenches 2>/dev/null | cut -d' ' -f1)" -- "$cur")) ;;
        run)
            COMPREPLY=($(compgen -W "--platform --testbench --workload --set --timing --stats-json --trace --trace-window --trace-max-events --progress --quiet --help" -- "$cur")) ;;
        calibrate)
            COMPREPLY=($(compgen -W "flow --platform --set --output --help" -- "$cur")) ;;
        validate)
            COMPREPLY=($(compgen -W "--platform --testbench --workload --set --help" -- "$cur") $(compgen -f -- "$cur")) ;;
        sweep)
            COMPREPLY=($(compgen -W "-o -j --resume --backend --dry-run --timeout --collect --help" -- "$cur") $(compgen -f -- "$cur")) ;;
    esac
}
complete -F _nctlm nctlm
