/* gemmcli completion bash: a completion script for bash, made from the
 * tables it completes from (the commands and their options, the kernels,
 * the formats and dtypes), so that it lists what this binary takes.
 *
 *   source <(gemmcli completion bash)
 *
 * `make install` puts it where bash-completion finds it. */
#include <stdio.h>
#include <string.h>

#include "core/dtype.h"
#include "core/error.h"
#include "formats/format.h"
#include "kernels/gemm.h"
#include "kernels/transpose.h"
#include "src/cli/commands.h"

#define MOST 64   /* commands, or options of one command */

int completion_check_usage(const struct gc_opts *o)
{
    if (o->n_operands != 1 || strcmp(o->operands[0], "bash") != 0)
        return gc_fail(GC_EXIT_USAGE, "completion takes one operand, the shell: bash");
    return 0;
}

/* A shell word list of the kernels --kernel takes, with auto first (not
 * the copies that only bench runs). */
static void print_kernels(int gemm)
{
    printf("auto");
    size_t n = gemm ? gemm_kernel_count : transpose_kernel_count;
    for (size_t i = 0; i < n; i++) {
        if (!gemm && (transpose_kernels[i].flags & KERNEL_BENCH_ONLY))
            continue;
        printf(" %s", gemm ? gemm_kernels[i].name : transpose_kernels[i].name);
    }
}

int cmd_completion(const struct gc_opts *o)
{
    (void)o;
    const char *names[MOST];
    unsigned groups[MOST];
    size_t n = commands_list(names, groups, MOST);

    printf("# bash completion for gemmcli, written by 'gemmcli completion bash'\n"
           "_gemmcli() {\n"
           "    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}\n"
           "    local cmd=${COMP_WORDS[1]} words\n"
           "    COMPREPLY=()\n"
           "    if [ \"$COMP_CWORD\" -eq 1 ]; then\n"
           "        words=\"help --help --version");
    for (size_t i = 0; i < n; i++)
        printf(" %s", names[i]);
    printf("\"\n"
           "    elif [ \"$cmd\" = help ]; then\n"
           "        [ \"$COMP_CWORD\" -eq 2 ] || return 0\n"
           "        words=\"");
    for (size_t i = 0; i < n; i++)
        printf("%s%s", i ? " " : "", names[i]);
    /* Option values that come from a table. */
    printf("\"\n"
           "    else\n"
           "        case $prev in\n"
           "        --kernel)\n"
           "            case $cmd in\n"
           "            transpose) words=\"");
    print_kernels(0);
    printf("\" ;;\n"
           "            *) words=\"");
    print_kernels(1);
    printf("\" ;;\n"
           "            esac ;;\n"
           "        --format)\n"
           "            words=\"");
    for (int f = 0, n = 0; f < GC_FMT_COUNT; f++)
        if (gc_formats[f].write)
            printf("%s%s", n++ ? " " : "", gc_formats[f].name);
    printf("\" ;;\n"
           "        --in-format)\n"
           "            words=\"");
    for (int f = 0; f < GC_FMT_COUNT; f++)
        printf("%s%s", f ? " " : "", gc_formats[f].name);
    printf("\" ;;\n"
           "        --dtype|--in-dtype)\n"
           "            words=\"");
    for (int d = 0; d < GC_DTYPE_COUNT; d++)
        printf("%s%s", d ? " " : "", gc_dtypes[d].name);
    printf("\" ;;\n"
           "        esac\n"
           "        if [ -z \"$words\" ]; then\n"
           "            case $cur in\n"
           "            -*)\n"
           "                case $cmd in\n");
    for (size_t i = 0; i < n; i++) {
        const char *opts[MOST];
        size_t k = options_long_names(groups[i], opts, MOST);
        printf("                %s) words=\"", names[i]);
        for (size_t j = 0; j < k; j++)
            printf("%s--%s", j ? " " : "", opts[j]);
        printf("\" ;;\n");
    }
    printf("                esac ;;\n"
           "            *) return 0 ;;\n"
           "            esac\n"
           "        fi\n"
           "    fi\n"
           "    COMPREPLY=($(compgen -W \"$words\" -- \"$cur\"))\n"
           "}\n"
           "complete -o bashdefault -o default -F _gemmcli gemmcli\n");
    if (fflush(stdout) != 0 || ferror(stdout))
        return gc_fail(GC_EXIT_OUTPUT, "<stdout>: write error");
    return 0;
}
