/*
 * Names for matching (resolution): the same text however it is cased,
 * accented, spaced or punctuated. utf8proc does the Unicode work.
 */
#ifndef CAIRN_MODEL_NORM_H
#define CAIRN_MODEL_NORM_H

#include <stddef.h>

/* The longest normalized name kept (bytes); longer ones are cut at a character boundary. */
#define NAME_CAP 200

/*
 * Normalize s[0..n-1] (valid UTF-8) into out (NAME_CAP bytes): compatibility
 * decomposition, case folding, combining marks (accents) removed, and
 * every run of characters that are not letters or digits made one space,
 * none at either end. "Müller-Lüdenscheidt GmbH." gives
 * "muller ludenscheidt gmbh". Returns the length (0 when nothing is left).
 */
size_t name_norm(const char *s, size_t n, char *out);

/*
 * Edit distance between a and b (insertions, deletions, substitutions and
 * transpositions of adjacent bytes), or max + 1 when it exceeds max.
 */
unsigned name_distance(const char *a, size_t an, const char *b, size_t bn, unsigned max);

#endif
