/* auto's choices: none measured yet, so auto takes the top of each ladder.
 * Regenerate on the target device with
 * `gemmcli bench --op mul --auto-table kernels/auto_table.c`. */
#include "registry.h"

const struct auto_choice auto_choices[] = {
    { 0, 0, 0, 0, 0 },
};
const size_t auto_choice_count = 0;
