/* cairn gen and cairn bench: the benchmark workload (bench/). */
#include "cli/cli.h"

int cmd_gen(cli *c)
{
	(void)c;
	return cli_usage("gen is not available yet");
}

int cmd_bench(cli *c)
{
	(void)c;
	return cli_usage("bench is not available yet");
}
