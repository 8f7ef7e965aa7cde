// What every TypeScript SDK client script shares: its connection to agenthost's /mcp
// (MCP_URL, with the API key MCP_KEY) and its one line of JSON output.
// tests/adapters/mcp/test_ts_sdk_clients.py copies these scripts beside the SDK
// (.tools/clients, from tests/clients/install.sh) and runs them with its Node 22.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

export async function connect({ capabilities = {}, key = process.env.MCP_KEY } = {}) {
  const client = new Client({ name: "agenthost-ts-tests", version: "1.0.0" }, { capabilities });
  const headers = { Authorization: `Bearer ${key}` };
  const transport = new StreamableHTTPClientTransport(new URL(process.env.MCP_URL), {
    requestInit: { headers },
  });
  await client.connect(transport);
  return client;
}

export function print(value) {
  process.stdout.write(`${JSON.stringify(value)}\n`);
}

/** The next line the test writes to this script's stdin. */
export async function nextLine() {
  for await (const chunk of process.stdin) {
    return chunk.toString();
  }
  return "";
}

/** What a failed call threw: its JSON-RPC (or HTTP) code and message. */
export function failure(error) {
  return { name: error?.constructor?.name, code: error?.code, message: String(error?.message) };
}
