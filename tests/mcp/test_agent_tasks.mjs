// The agent tasks of agent_tasks.mjs as a test: each task in at most 2
// calls, its answers within 2 KB unless it asked for more, tools/list
// within 8 KB. Nothing here depends on the machine's speed: the latencies
// are printed, not checked. Run as
//   CAIRN=/abs/path/to/cairn node tests/mcp/test_agent_tasks.mjs
// after `npm ci` in tests/mcp.
import { main } from './agent_tasks.mjs';

await main(['--check']);
