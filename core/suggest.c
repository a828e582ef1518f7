#include "core/suggest.h"

#include <ctype.h>
#include <string.h>

/* Longer words are never suggested: a name is a few dozen letters at most. */
#define SUGGEST_MAX 64

static int same_letter(char x, char y)
{
    return tolower((unsigned char)x) == tolower((unsigned char)y);
}

int suggest_distance(const char *a, const char *b, int cap)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > SUGGEST_MAX || lb > SUGGEST_MAX)
        return cap + 1;
    if ((la > lb ? la - lb : lb - la) > (size_t)cap)
        return cap + 1;
    /* Three rows of the table: i - 2, i - 1 and i. */
    int rows[3][SUGGEST_MAX + 1];
    for (size_t j = 0; j <= lb; j++)
        rows[0][j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        int *prev2 = rows[(i + 1) % 3], *prev = rows[(i - 1) % 3], *cur = rows[i % 3];
        cur[0] = (int)i;
        int row_min = cur[0];
        for (size_t j = 1; j <= lb; j++) {
            int same = same_letter(a[i - 1], b[j - 1]);
            int d = prev[j - 1] + !same;
            if (prev[j] + 1 < d)
                d = prev[j] + 1;
            if (cur[j - 1] + 1 < d)
                d = cur[j - 1] + 1;
            /* (two neighbours swapped: one edit) */
            if (i > 1 && j > 1 && same_letter(a[i - 1], b[j - 2]) &&
                same_letter(a[i - 2], b[j - 1]) && prev2[j - 2] + 1 < d)
                d = prev2[j - 2] + 1;
            cur[j] = d;
            if (d < row_min)
                row_min = d;
        }
        if (row_min > cap)
            return cap + 1;
    }
    int d = rows[la % 3][lb];
    return d > cap ? cap + 1 : d;
}

void suggest_init(struct suggest *s, const char *word)
{
    s->word = word;
    s->best = NULL;
    s->best_d = 3;
}

void suggest_offer(struct suggest *s, const char *name)
{
    int d = suggest_distance(s->word, name, 2);
    size_t longer = strlen(name) > strlen(s->word) ? strlen(name) : strlen(s->word);
    if (d <= 2 && (size_t)d * 3 <= longer && d < s->best_d && d > 0) {
        s->best = name;
        s->best_d = d;
    }
}

const char *suggest_result(const struct suggest *s)
{
    return s->best;
}
