/*
 * Opening and closing a store: the store layer's environment, the upgrade of
 * an older format, and the maintenance thread of a writable store.
 */
#include "admin/admin.h"
#include "base/err.h"
#include "version/version.h"

int cairn_open(const char *path, const cairn_open_options *opts, cairn_store **out)
{
	int rc;
	unsigned flags = opts ? opts->flags : 0;

	if (opts && opts->retain_ms < 0) {
		if (out)
			*out = NULL;
		return err_set(CAIRN_EINVAL, "cairn_open: a retention of %lld ms",
			       (long long)opts->retain_ms);
	}
	if (opts && (rc = err_reserved(opts->reserved, "cairn_open", "cairn_open_options"))) {
		if (out)
			*out = NULL;
		return rc;
	}
	rc = store_open(path, opts, out);

	if (!rc && (*out)->format < STORE_FORMAT && (rc = store_upgrade(*out))) {
		store_close(*out);
		*out = NULL;
	}
	if (rc || (flags & (CAIRN_OPEN_RDONLY | CAIRN_OPEN_NO_BACKGROUND)))
		return rc;
	if ((rc = maint_start(*out, opts ? opts->retain_ms : 0))) {
		store_close(*out);
		*out = NULL;
	}
	return rc;
}

void cairn_close(cairn_store *st)
{
	if (!st)
		return;
	maint_stop(st);
	store_close(st);
}
