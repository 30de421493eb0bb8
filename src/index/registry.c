/*
 * The registry of the secondary indexes (version/index.h): the one place
 * that names them all. Commits, schema changes and the maintenance thread
 * call every index listed here, in this order.
 */
#include "index/names/names.h"
#include "index/text/text.h"
#include "index/vector/vindex.h"

const index_ops *const index_registry[] = {
	&names_index,
	&text_index,
	&vector_index,
	NULL,
};
