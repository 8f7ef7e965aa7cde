// The `ai` package's DefaultChatTransport (what useChat sends and reads),
// readUIMessageStream, and its Chat (the state useChat keeps: AbstractChat with an
// in-memory state, as @ai-sdk/react's) against agenthost's /ai-sdk (AI_SDK_URL): it runs
// the scenarios AI_SDK_SCENARIOS names (a JSON object: scenario → {agent, say, ...}, in
// order) and prints one line of JSON with what each ended with. AI_SDK_KEY, when set,
// goes as the bearer token. Run by tests/adapters/ai_sdk/test_ai_client.py (in-process
// agents) and test_served_ai_client.py (`agenthost serve` on the fake upstream).
import {
  AbstractChat,
  DefaultChatTransport,
  lastAssistantMessageIsCompleteWithApprovalResponses,
  readUIMessageStream,
} from "ai";

const base = process.env.AI_SDK_URL;
const plan = JSON.parse(process.env.AI_SDK_SCENARIOS);
const headers = process.env.AI_SDK_KEY ? { Authorization: `Bearer ${process.env.AI_SDK_KEY}` } : {};
let counter = 0;
const user = (text) => ({ id: `u${++counter}`, role: "user", parts: [{ type: "text", text }] });
const transportTo = (agent) => new DefaultChatTransport({ api: `${base}/${agent}`, headers });

async function send(agent, messages) {
  const transport = transportTo(agent);
  let last = null;
  let error = null;
  try {
    const stream = await transport.sendMessages({
      chatId: `chat-${++counter}`,
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
async function approval(agent, words, tool, approved) {
  const finished = [];
  const chat = new Chat({
    id: `approval-${approved}`,
    transport: transportTo(agent),
    sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
    onFinish: ({ message }) => finished.push(message.id),
  });
  await chat.sendMessage({ text: words });
  const asked = structuredClone(chat.lastMessage);
  const part = asked.parts.find((p) => p.type === `tool-${tool}`);
  await chat.addToolApprovalResponse({ id: part.approval.id, approved });
  const deadline = Date.now() + 60_000;
  while (finished.length < 2 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return { asked, message: chat.lastMessage, count: chat.messages.length, finished, error: chat.error?.message ?? null };
}

const scenarios = {
  text: ({ agent, say }) => send(agent, [user(say)]),
  tool: ({ agent, say }) => send(agent, [user(say)]),
  async askUser({ agent, say, answer }) {
    // ask_user is a call the client answers as a tool output, then sends the chat again.
    const hello = user(say);
    const asked = await send(agent, [hello]);
    const part = asked.message.parts.find((p) => p.type === "tool-ask_user");
    const parts = asked.message.parts.map((p) => (p === part ? { ...p, state: "output-available", output: answer } : p));
    const answered = await send(agent, [hello, { ...asked.message, parts }]);
    return { asked, answered };
  },
  async approval({ agent, say, tool }) {
    return { approved: await approval(agent, say, tool, true), denied: await approval(agent, say, tool, false) };
  },
  async twoTurns({ agent, say: [first, then] }) {
    const chat = new Chat({ id: `turns-${++counter}`, transport: transportTo(agent) });
    await chat.sendMessage({ text: first });
    await chat.sendMessage({ text: then });
    const texts = chat.messages
      .filter((m) => m.role === "assistant")
      .map((m) => m.parts.filter((p) => p.type === "text").map((p) => p.text).join(""));
    return { texts, error: chat.error?.message ?? null };
  },
  failing: ({ agent, say }) => send(agent, [user(say)]),
  unknown: ({ agent }) => send(agent, [user("hi")]),
};

const results = {};
for (const [name, parameters] of Object.entries(plan)) {
  results[name] = await scenarios[name](parameters);
}
process.stdout.write(`${JSON.stringify(results)}\n`);
