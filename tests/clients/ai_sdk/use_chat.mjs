// The `ai` package's DefaultChatTransport (what useChat sends and reads),
// readUIMessageStream, and its Chat (the state useChat keeps: AbstractChat with an
// in-memory state, as @ai-sdk/react's) against agenthost's /ai-sdk (AI_SDK_URL): one line
// of JSON with the assistant message each scenario ends with. Run by
// tests/adapters/ai_sdk/test_ai_client.py.
import {
  AbstractChat,
  DefaultChatTransport,
  lastAssistantMessageIsCompleteWithApprovalResponses,
  readUIMessageStream,
} from "ai";

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

class State {
  status = "ready";
  error = undefined;
  messages = [];
  pushMessage = (message) => {
    this.messages = this.messages.concat(message);
  };
  popMessage = () => {
    this.messages = this.messages.slice(0, -1);
  };
  replaceMessage = (index, message) => {
    this.messages = [...this.messages.slice(0, index), message, ...this.messages.slice(index + 1)];
  };
  snapshot = (value) => structuredClone(value);
}

class Chat extends AbstractChat {
  constructor(init) {
    super({ ...init, state: new State() });
  }
}

// useChat's approval flow: the tool part waits in approval-requested; addToolApprovalResponse
// answers it and sendAutomaticallyWhen sends the chat again, which streams the outcome.
async function approval(approved) {
  const finished = [];
  const chat = new Chat({
    id: `approval-${approved}`,
    transport: new DefaultChatTransport({ api: `${base}/deleter` }),
    sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
    onFinish: ({ message }) => finished.push(message.id),
  });
  await chat.sendMessage({ text: "tidy up" });
  const asked = structuredClone(chat.lastMessage);
  const part = asked.parts.find((p) => p.type === "tool-delete_file");
  await chat.addToolApprovalResponse({ id: part.approval.id, approved });
  const deadline = Date.now() + 60_000;
  while (finished.length < 2 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return { asked, message: chat.lastMessage, count: chat.messages.length, finished, error: chat.error?.message ?? null };
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
results.approved = await approval(true);
results.denied = await approval(false);
results.failing = await send("failing", [user("hi")]);
results.unknown = await send("nobody", [user("hi")]);
process.stdout.write(`${JSON.stringify(results)}\n`);
