/* "Did you mean": the name nearest a mistyped word among those offered,
 * for the messages that refuse an unknown command, option or kernel.
 *
 *   struct suggest s;
 *   suggest_init(&s, word);
 *   for (each name) suggest_offer(&s, name);
 *   const char *near = suggest_result(&s);   (NULL: none near enough) */
#ifndef GC_SUGGEST_H
#define GC_SUGGEST_H

struct suggest {
    const char *word;
    const char *best;   /* the nearest name offered so far */
    int best_d;         /* its distance from word */
};

void suggest_init(struct suggest *s, const char *word);

/* Weighs one more name. */
void suggest_offer(struct suggest *s, const char *name);

/* The nearest name, where it is near enough to be what was meant: at most
 * 2 edits (a letter added, dropped, changed, or two neighbours swapped),
 * and at most a third of the longer word's letters; ties go to the name
 * offered first. */
const char *suggest_result(const struct suggest *s);

/* The edit distance (optimal string alignment, letters compared without
 * case) between a and b, where it is at most `cap`; else cap + 1. */
int suggest_distance(const char *a, const char *b, int cap);

#endif
