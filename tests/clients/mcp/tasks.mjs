// MCP tasks as agenthost serves them: the 2026-07-28 tasks extension (SEP-2663), which a
// request opts into by its own _meta client capabilities. The TypeScript SDK 1.x cannot
// speak it: its newest protocol version is 2025-11-25, whose experimental tasks are
// another shape (params.task on tools/call, a {task} result, tasks/result, tasks/list),
// and agenthost serves tasks in the 2026-07-28 era only. So this script is plain
// JSON-RPC over Node's fetch: a task polled to completion, another cancelled once
// the test (a line on stdin) has seen its upstream stream start.
import { failure, nextLine, print } from "./common.mjs";

const VERSION = "2026-07-28";
const EXTENSION = "io.modelcontextprotocol/tasks";
const META = {
  "io.modelcontextprotocol/protocolVersion": VERSION,
  "io.modelcontextprotocol/clientInfo": { name: "agenthost-ts-tests", version: "1.0.0" },
  "io.modelcontextprotocol/clientCapabilities": { extensions: { [EXTENSION]: {} } },
};
let lastId = 0;

/** One JSON-RPC request; its result, or an Error with the JSON-RPC error's code. */
async function send(method, params, name) {
  const id = ++lastId;
  const headers = {
    Accept: "application/json, text/event-stream",
    "Content-Type": "application/json",
    Authorization: `Bearer ${process.env.MCP_KEY}`,
    "MCP-Protocol-Version": VERSION,
    "Mcp-Method": method,
    ...(name ? { "Mcp-Name": name } : {}),
  };
  const body = JSON.stringify({ jsonrpc: "2.0", id, method, params: { ...params, _meta: META } });
  const response = await fetch(process.env.MCP_URL, { method: "POST", headers, body });
  const text = await response.text();
  const messages = response.headers.get("content-type")?.startsWith("text/event-stream")
    ? text
        .split("\n")
        .filter((line) => line.startsWith("data:") && line.length > 5)
        .map((line) => JSON.parse(line.slice(5)))
    : [JSON.parse(text)];
  const answer = messages.find((message) => message.id === id);
  if (answer?.error) throw Object.assign(new Error(answer.error.message), answer.error);
  if (!answer) throw new Error(`HTTP ${response.status}: ${text}`);
  return answer.result;
}

const call = (name) => send("tools/call", { name, arguments: { message: "go" } }, name);

async function poll(taskId) {
  const seen = [];
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const task = await send("tasks/get", { taskId });
    seen.push(task);
    if (["completed", "failed", "cancelled"].includes(task.status)) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return seen;
}

const output = {};
const polled = await call("unhurried");
output.polled = { created: polled, seen: await poll(polled.taskId) };
const cancelled = await call("long_task");
print({ created: cancelled });
await nextLine(); // the test saw its upstream stream start
const before = await send("tasks/get", { taskId: cancelled.taskId });
const ack = await send("tasks/cancel", { taskId: cancelled.taskId });
output.cancelled = { created: cancelled, before, ack, seen: await poll(cancelled.taskId) };
try {
  output.unknown = await send("tasks/get", { taskId: "no-such-task" });
} catch (error) {
  output.unknown = failure(error);
}
print(output);
