// Runs a list of tool calls through the TypeScript SDK's client after
// listing the tools, so that the SDK validates every answer's
// structuredContent against the tool's outputSchema (it does so only for
// tools it has listed). Prints one JSON line per call; exits 3 on the
// first answer the SDK refuses.
//
//   node tsvalidate.mjs NODE_DIR "WINX CMD" CALLS_JSON
//
// NODE_DIR is the directory whose node_modules holds the SDK (the clients'
// node directory). In CALLS_JSON, the strings "$thread" and "$root" stand
// for the thread_id and workspace_root the first call (Initialize) gave.
import { createRequire } from 'node:module';

const [, , nodeDir, command, callsJSON] = process.argv;
const require = createRequire(nodeDir + '/package.json');
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StdioClientTransport } = require('@modelcontextprotocol/sdk/client/stdio.js');

const bind = (v, ids) => JSON.parse(JSON.stringify(v), (k, x) => (x === '$thread' ? ids.thread : x === '$root' ? ids.root : x));

const client = new Client({ name: 'tsvalidate', version: '1' });
await client.connect(new StdioClientTransport({ command: '/bin/sh', args: ['-c', command], env: process.env, stderr: 'ignore' }));
await client.listTools();
const ids = {};
let code = 0;
for (const call of JSON.parse(callsJSON)) {
  try {
    const res = await client.callTool({ name: call.tool, arguments: bind(call.args, ids) });
    const sc = res.structuredContent ?? {};
    if (call.tool === 'Initialize' && sc.data?.thread_id) {
      ids.thread = sc.data.thread_id;
      ids.root = sc.data.workspace_root;
    }
    console.log(JSON.stringify({ tool: call.tool, status: sc.status, errorCode: sc.errorCode ?? '', isError: !!res.isError }));
  } catch (e) {
    console.log(JSON.stringify({ tool: call.tool, refused: String(e?.message ?? e) }));
    code = 3;
    break;
  }
}
await client.close().catch(() => {});
process.exit(code);
