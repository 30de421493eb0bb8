/* What the files of src/memory/ share. */
#ifndef CAIRN_MEMORY_MEMORY_H
#define CAIRN_MEMORY_MEMORY_H

#include <stddef.h>

#include "cairn.h"

/* Split "Kind:key" into kind (copied, NUL-terminated) and key. 0, or -1 when it is not one. */
int mem_split_ref(const char *s, char kind[CAIRN_MAX_NAME + 1], const char **key, size_t *key_len);

/* Whether a Record of Kind kind may be what a memory of Kind memkind is about (not a memory, episode or source). */
int mem_subject_kind(const char *kind, const char *memkind);

#endif
