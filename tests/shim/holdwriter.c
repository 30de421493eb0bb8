/*
 * For tests: holds the writer lock of the store in directory argv[1] (its
 * LMDB environment), as another process writing to it would, until its
 * stdin closes. Says "holding" on stdout once it holds it.
 */
#include <lmdb.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	MDB_env *env;
	MDB_txn *txn;

	if (argc != 2 || mdb_env_create(&env) || mdb_env_set_maxdbs(env, 128) ||
	    mdb_env_open(env, argv[1], 0, 0644) || mdb_txn_begin(env, NULL, 0, &txn))
		return 1;
	printf("holding\n");
	fflush(stdout);
	while (getchar() != EOF)
		;
	mdb_txn_abort(txn);
	mdb_env_close(env);
	return 0;
}
