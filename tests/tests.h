/*
 * The test harness: every test is a function registered in TESTS below, run
 * in a child process of its own (so a crash fails one test) with a fresh
 * scratch directory. A failed check prints file:line, the expression and,
 * for error codes, the error's name and message. Several tests run at once
 * (tests/main.c), so a test writes only in its scratch directory, never to
 * a fixed path or port, and waits for conditions, never for time to pass.
 */
#ifndef CAIRN_TESTS_H
#define CAIRN_TESTS_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "cairn.h"

/* One line per test file: X(name) declares and runs test_<name>_*. */
#define TESTS(X)                                                                                   \
	X(api_version)                                                                             \
	X(api_reserved_options)                                                                    \
	X(api_reserved_results)                                                                    \
	X(api_old_names)                                                                           \
	X(util_buf)                                                                                \
	X(util_utf8)                                                                               \
	X(util_time)                                                                               \
	X(util_closest)                                                                            \
	X(util_hmap)                                                                               \
	X(util_arena)                                                                              \
	X(util_alloc)                                                                              \
	X(util_knob)                                                                               \
	X(json_canon)                                                                              \
	X(json_limits)                                                                             \
	X(json_members)                                                                            \
	X(json_peek)                                                                               \
	X(json_nul)                                                                                \
	X(schema_parse)                                                                            \
	X(schema_errors)                                                                           \
	X(schema_merge)                                                                            \
	X(store_open)                                                                              \
	X(store_locked)                                                                            \
	X(store_backup)                                                                            \
	X(store_grow)                                                                              \
	X(store_wlist_sort)                                                                        \
	X(damage_sound)                                                                            \
	X(damage_every_page)                                                                       \
	X(damage_open)                                                                             \
	X(damage_check)                                                                            \
	X(damage_guard)                                                                            \
	X(damage_version)                                                                          \
	X(domain_lifecycle)                                                                        \
	X(domain_isolation)                                                                        \
	X(commit_basic)                                                                            \
	X(commit_provenance)                                                                       \
	X(commit_hash_chain)                                                                       \
	X(commit_expect)                                                                           \
	X(commit_patch_delete)                                                                     \
	X(commit_links)                                                                            \
	X(commit_cascade)                                                                          \
	X(commit_same_record_twice)                                                                \
	X(commit_group)                                                                            \
	X(read_page)                                                                               \
	X(read_links_page)                                                                         \
	X(read_at_revision)                                                                        \
	X(read_count_log)                                                                          \
	X(schema_populated)                                                                        \
	X(import_forward)                                                                          \
	X(import_errors)                                                                           \
	X(import_roundtrip)                                                                        \
	X(import_order)                                                                            \
	X(import_forward_many)                                                                     \
	X(import_first_error)                                                                      \
	X(oom_commit)                                                                              \
	X(crash_sigkill)                                                                           \
	X(crash_merge_delete)                                                                      \
	X(crash_vindex)                                                                            \
	X(crash_reembed)                                                                           \
	X(crash_compact)                                                                           \
	X(erase_record)                                                                            \
	X(erase_source)                                                                            \
	X(erase_actor)                                                                             \
	X(erase_errors)                                                                            \
	X(erase_crash)                                                                             \
	X(erase_format1)                                                                           \
	X(erase_deleted_branch)                                                                    \
	X(readers_concurrent)                                                                      \
	X(check_detects)                                                                           \
	X(branch_basic)                                                                            \
	X(branch_isolation)                                                                        \
	X(branch_names)                                                                            \
	X(branch_delete)                                                                           \
	X(branch_delete_background)                                                                \
	X(branch_clear_bounded)                                                                    \
	X(branch_delete_schema)                                                                    \
	X(history_record)                                                                          \
	X(history_link)                                                                            \
	X(lineage_values)                                                                          \
	X(merge_clean)                                                                             \
	X(merge_conflicts)                                                                         \
	X(merge_delete_change)                                                                     \
	X(merge_links)                                                                             \
	X(merge_repeated)                                                                          \
	X(merge_vectors)                                                                           \
	X(merge_dry_run)                                                                           \
	X(diff_revisions)                                                                          \
	X(proposals)                                                                               \
	X(proposal_schema)                                                                         \
	X(tokens)                                                                                  \
	X(query_reference)                                                                         \
	X(query_relied_entries)                                                                    \
	X(timetravel_reference)                                                                    \
	X(timetravel_compact)                                                                      \
	X(timetravel_kseg)                                                                         \
	X(kseg_reads)                                                                              \
	X(kseg_check)                                                                              \
	X(kseg_fold_entries)                                                                       \
	X(kseg_schema)                                                                             \
	X(live_chunk_cache)                                                                        \
	X(compact_indexes)                                                                         \
	X(compact_errors)                                                                          \
	X(compact_background)                                                                      \
	X(graph_neighborhood_reference)                                                            \
	X(graph_headers)                                                                           \
	X(graph_neighborhood_caps)                                                                 \
	X(graph_values)                                                                            \
	X(graph_follow_reference)                                                                  \
	X(graph_follow_cap_random)                                                                 \
	X(graph_follow_cap)                                                                        \
	X(graph_shortest_path_reference)                                                           \
	X(graph_small_neighborhood)                                                                \
	X(graph_small_follow)                                                                      \
	X(graph_small_path)                                                                        \
	X(graph_errors)                                                                            \
	X(analyze_golden)                                                                          \
	X(analyze_invariants)                                                                      \
	X(analyze_positions)                                                                       \
	X(analyze_stem)                                                                            \
	X(vsearch_reference)                                                                       \
	X(vsearch_errors)                                                                          \
	X(vindex_recall)                                                                           \
	X(vindex_changes)                                                                          \
	X(vindex_background)                                                                       \
	X(vindex_errors)                                                                           \
	X(vindex_where)                                                                            \
	X(vindex_probes_monotone)                                                                  \
	X(hybrid_fusion)                                                                           \
	X(hybrid_ranking)                                                                          \
	X(hybrid_exclude_pool)                                                                     \
	X(hybrid_embedder)                                                                         \
	X(hybrid_vector_model)                                                                     \
	X(hybrid_reembed)                                                                          \
	X(embed_reference)                                                                         \
	X(embed_edges)                                                                             \
	X(search_reference)                                                                        \
	X(search_partial_bounds)                                                                   \
	X(search_errors)                                                                           \
	X(search_schema)                                                                           \
	X(search_branches)                                                                         \
	X(search_phrases)                                                                          \
	X(search_filters)                                                                          \
	X(search_exclude)                                                                          \
	X(search_merge_policy)                                                                     \
	X(search_dense)                                                                            \
	X(search_check_detects)                                                                    \
	X(search_typos_exact)                                                                      \
	X(memory_schema)                                                                       \
	X(memory_any_kind)                                                                     \
	X(memory_remember)                                                                     \
	X(memory_supersede)                                                                    \
	X(memory_retract)                                                                      \
	X(memory_errors)                                                                       \
	X(memory_digest)                                                                       \
	X(memory_recall)                                                                       \
	X(memory_valid_time)                                                                   \
	X(memory_single_valued)                                                                \
	X(resolve_norm)                                                                            \
	X(resolve_norm_cap)                                                                        \
	X(resolve_distance)                                                                        \
	X(resolve_nothing)                                                                         \
	X(resolve_exact)                                                                           \
	X(resolve_spelling)                                                                        \
	X(resolve_order)                                                                           \
	X(resolve_limit_prefix)                                                                    \
	X(resolve_history)                                                                         \
	X(resolve_names_on_change)                                                                 \
	X(resolve_schema)                                                                          \
	X(resolve_alias_dropped)                                                                   \
	X(resolve_domains)                                                                         \
	X(resolve_reference)                                                                       \
	X(resolve_errors)                                                                          \
	X(resolve_truncated)                                                                       \
	X(resolve_check_detects)                                                                   \
	X(resolve_upgrade)                                                                         \
	VALIDATION_TESTS(X)

/* Negative tests, one per validation rule (tests/test_validation.c). */
#define VALIDATION_TESTS(X)                                                                        \
	X(neg_unknown_kind)                                                                        \
	X(neg_unknown_attribute)                                                                   \
	X(neg_wrong_type)                                                                          \
	X(neg_enum_value)                                                                          \
	X(neg_required_missing)                                                                    \
	X(neg_unique_store)                                                                        \
	X(neg_unique_in_commit)                                                                    \
	X(neg_ref_missing)                                                                         \
	X(neg_link_end_missing)                                                                    \
	X(neg_link_wrong_kinds)                                                                    \
	X(neg_cardinality_one)                                                                     \
	X(neg_key_empty)                                                                           \
	X(neg_key_too_long)                                                                        \
	X(neg_key_not_utf8)                                                                        \
	X(neg_names_nul)                                                                           \
	X(neg_json_names_nul)                                                                      \
	X(neg_delete_with_links)                                                                   \
	X(neg_patch_missing)                                                                       \
	X(neg_unlink_missing)                                                                      \
	X(neg_bad_json)                                                                            \
	X(neg_unknown_relation)                                                                    \
	X(neg_confidence_range)                                                                    \
	X(neg_bad_dates)                                                                           \
	X(neg_vector_dimension)                                                                    \
	X(neg_one_bad_change_of_many)

#define X(name) void test_##name(void);
TESTS(X)
#undef X

/* Failure reporting (the test function returns right after). */
void test_fail(const char *file, int line, const char *expr);
void test_fail_rc(const char *file, int line, const char *expr, int got, int want);
extern int test_failed;

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			test_fail(__FILE__, __LINE__, #cond);                                      \
			return;                                                                    \
		}                                                                                  \
	} while (0)

#define CHECK_RC(expr, want)                                                                       \
	do {                                                                                       \
		int rc_ = (expr);                                                                  \
		if (rc_ != (want)) {                                                               \
			test_fail_rc(__FILE__, __LINE__, #expr, rc_, (want));                      \
			return;                                                                    \
		}                                                                                  \
	} while (0)

#define OK(expr) CHECK_RC(expr, 0)

/*
 * How long a test waits for a condition before it calls the wait a hang: a
 * guard against a test that never ends, never a measure of the machine's speed.
 */
#define TEST_HANG_MS (10 * 60 * 1000)

/* A fresh scratch directory for this test (removed after it). */
const char *test_dir(void);
/* A path inside the scratch directory. */
const char *test_path(const char *name);

/* The schema used by most tests (Supplier, Part, Plant; relations supplied_by, stocked_at, primary_plant (one)). */
extern const char test_schema[];
/* Open a new store in the scratch directory with Domain "d" and test_schema applied. */
cairn_store *test_store(void);
/* Commit import lines (separated by newlines) to Domain "d", main, as one change set. */
int test_commit(cairn_store *st, const char *lines, cairn_commit_result *res);
/* Same on a given Domain. */
/* The same on a branch (NULL: main). */
int test_commit_on(cairn_store *st, const char *domain, const char *branch, const char *lines,
		   cairn_commit_result *res);
/*
 * Optimal string alignment distance (adjacent transpositions), by brute
 * force; UINT_MAX past 255 bytes.
 */
unsigned test_osa(const char *a, size_t an, const char *b, size_t bn);
/*
 * The edits a typo correction counts from the text q[0..m-1] to the word w
 * (docs/search.md): the OSA distance when the first letters agree; 2 when
 * only the first letter changed (replaced, one put before it, left out,
 * swapped with the second); UINT_MAX otherwise.
 */
unsigned test_typo_edits(const char *q, size_t m, const char *w);
int test_commit_in(cairn_store *st, const char *domain, const char *lines,
		   cairn_commit_result *res);
/* Export Domain "d" (main) into a malloc'd string. */
char *test_export(cairn_store *st, const char *domain);
/* Head revision of Domain d's main branch. */
uint64_t test_head(cairn_store *st, const char *domain);
/* Entries of a sub-database (cairn_store_stats), UINT64_MAX on error. */
uint64_t test_db_entries(cairn_store *st, const char *db);
/* The compaction horizon of a Domain (cairn_domain_info.horizon), UINT64_MAX on error. */
uint64_t test_horizon(cairn_store *st, const char *domain);
/* Equality of a (ptr, len) string with a C string. */
int test_streq(const char *p, size_t n, const char *s);

#endif
