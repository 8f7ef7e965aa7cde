// useChat({resume: true}) against agenthost's /ai-sdk (AI_SDK_URL) with resume on: the
// `ai` package's Chat (what useChat keeps) sends a message, its connection drops
// mid-stream (a TypeError "network error", as fetch reports a lost network), then
// resumeStream() (what useChat runs on mount with resume: true) reconnects with
// DefaultChatTransport.reconnectToStream. One line of JSON with what it saw. Run by
// tests/adapters/ai_sdk/test_resume_client.py.
import { AbstractChat, DefaultChatTransport } from "ai";

const base = process.env.AI_SDK_URL;

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

// The slow agent's tool waits until the release agent runs: released once the resumed
// stream has started, so the run is still going when the client reconnects.
async function release() {
  const body = {
    id: `release-${Date.now()}`,
    messages: [{ id: "r1", role: "user", parts: [{ type: "text", text: "go" }] }],
  };
  const answer = await fetch(`${base}/release`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  await answer.text();
}

const requests = [];

// fetch as the browser's, except that the POST's answer breaks after the tool call.
async function flakyFetch(url, init) {
  const response = await fetch(url, init);
  requests.push([init?.method ?? "GET", new URL(url).pathname, response.status]);
  if (init?.method === "GET") {
    if (response.status === 200) await release();
    return response;
  }
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let seen = "";
  const body = new ReadableStream({
    async pull(controller) {
      const { done, value } = await reader.read();
      if (done) {
        controller.close();
        return;
      }
      seen += decoder.decode(value, { stream: true });
      if (seen.includes('"tool-input-available"')) {
        await reader.cancel();
        controller.error(new TypeError("network error"));
        return;
      }
      controller.enqueue(value);
    },
  });
  return new Response(body, { status: response.status, headers: response.headers });
}

const chat = new Chat({
  id: `resume-${Date.now()}`,
  transport: new DefaultChatTransport({ api: `${base}/slow`, fetch: flakyFetch }),
});
await chat.sendMessage({ text: "do it" });
const dropped = { status: chat.status, error: String(chat.error?.message ?? "") };
await chat.resumeStream();
// Over: nothing left to resume.
const after = await new DefaultChatTransport({ api: `${base}/slow` }).reconnectToStream({
  chatId: chat.id,
});
console.log(
  JSON.stringify({
    dropped,
    status: chat.status,
    messages: chat.messages,
    requests,
    afterwards: after,
  }),
);
