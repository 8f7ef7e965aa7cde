// The `ai` package's DefaultChatTransport (what useChat sends and reads) and
// readUIMessageStream against agenthost's /ai-sdk (AI_SDK_URL): one line of JSON with
// the assistant message each scenario ends with. Run by tests/adapters/ai_sdk/test_ai_client.py.
import { DefaultChatTransport, readUIMessageStream } from "ai";

const base = process.env.AI_SDK_URL;
let counter = 0;
const user = (text) => ({ id: `u${++counter}`, role: "user", parts: [{ type: "text", text }] });

async function send(agent, messages) {
  const transport = new DefaultChatTransport({ api: `${base}/${agent}` });
  let last = null;
  let error = null;
  try {
    const stream = await transport.sendMessages({
      chatId: "chat-1",
      messages,
      trigger: "submit-message",
      messageId: undefined,
      abortSignal: undefined,
    });
    for await (const message of readUIMessageStream({
      stream,
      onError: (e) => {
        error = String(e?.message ?? e);
      },
    })) {
      last = message;
    }
  } catch (e) {
    error = String(e?.message ?? e);
  }
  return { message: last, error };
}

const results = {};
results.text = await send("echo", [user("hello there")]);
results.tool = await send("adder", [user("2 + 3?")]);
const hello = user("hi");
const asked = await send("asker", [hello]);
results.asked = asked;
const part = asked.message.parts.find((p) => p.type === "tool-ask_user");
const answered = { ...asked.message, parts: asked.message.parts.map((p) => (p === part ? { ...p, state: "output-available", output: "Ada" } : p)) };
results.answered = await send("asker", [hello, answered]);
results.failing = await send("failing", [user("hi")]);
results.unknown = await send("nobody", [user("hi")]);
process.stdout.write(`${JSON.stringify(results)}\n`);
