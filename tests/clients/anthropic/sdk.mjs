// The Anthropic TypeScript SDK (@anthropic-ai/sdk) against agenthost's /v1/messages
// (ANTHROPIC_BASE_URL, ANTHROPIC_API_KEY): each scenario uses the SDK as an application
// does and the script prints one line of JSON with what it saw.
// tests/adapters/anthropic/test_ts_sdk.py copies this script beside the SDK
// (.tools/clients, from tests/clients/install.sh) and runs it with its Node 22.
import Anthropic from "@anthropic-ai/sdk";

const client = new Anthropic({ maxRetries: 0 }); // ANTHROPIC_BASE_URL, ANTHROPIC_API_KEY
const WEATHER = {
  name: "get_weather",
  description: "The weather in a city.",
  input_schema: {
    type: "object",
    properties: { city: { type: "string" } },
    required: ["city"],
  },
};
const user = (content) => ({ role: "user", content });
const texts = (message) =>
  message.content.filter((b) => b.type === "text").map((b) => b.text);

function failure(e) {
  const kind = Object.entries(Anthropic).find(
    ([name, type]) => name.endsWith("Error") && type?.prototype && e.constructor === type,
  );
  return { class: kind?.[0] ?? e.constructor.name, status: e.status, type: e.type, body: e.error };
}

async function failing(call) {
  try {
    await call();
  } catch (e) {
    return failure(e);
  }
  return null;
}

const scenarios = {
  async create() {
    const message = await client.messages.create({
      model: "relay",
      max_tokens: 100,
      system: "Answer briefly.",
      messages: [user("hello from typescript")],
    });
    const { id, type, role, model, stop_reason, usage } = message;
    return { id, type, role, model, stop_reason, usage, texts: texts(message) };
  },
  async stream() {
    const stream = client.messages.stream({
      model: "relay",
      max_tokens: 100,
      messages: [user("one two three")],
    });
    const pieces = [];
    stream.on("text", (text) => pieces.push(text));
    const events = [];
    for await (const event of stream) events.push(event.type);
    const final = await stream.finalMessage();
    return { pieces, events, stop_reason: final.stop_reason, texts: texts(final) };
  },
  async clientTool() {
    const messages = [user('use get_weather with {"city": "Paris"}')];
    const stream = client.messages.stream({
      model: "relay",
      max_tokens: 100,
      tools: [WEATHER],
      messages,
    });
    const inputPieces = [];
    stream.on("inputJson", (partial) => inputPieces.push(partial));
    const first = await stream.finalMessage();
    const call = first.content.find((b) => b.type === "tool_use");
    messages.push(
      { role: "assistant", content: first.content },
      user([{ type: "tool_result", tool_use_id: call.id, content: "sunny, 21 °C" }]),
    );
    const second = await client.messages.create({
      model: "relay",
      max_tokens: 100,
      tools: [WEATHER],
      messages,
    });
    return {
      first: { stop_reason: first.stop_reason, types: first.content.map((b) => b.type) },
      call: { name: call.name, input: call.input, id: call.id },
      inputPieces: inputPieces.length,
      second: { stop_reason: second.stop_reason, texts: texts(second) },
    };
  },
  async ownTool() {
    const message = await client.messages.create({
      model: "relay",
      max_tokens: 100,
      messages: [user("calculate 2+3")],
    });
    return { stop_reason: message.stop_reason, types: message.content.map((b) => b.type), texts: texts(message) };
  },
  async countTokens() {
    const short = await client.messages.countTokens({ model: "relay", messages: [user("hi")] });
    const longer = await client.messages.countTokens({
      model: "relay",
      system: "x".repeat(400),
      messages: [user("hi")],
      tools: [WEATHER],
    });
    return { short: short.input_tokens, longer: longer.input_tokens };
  },
  async models() {
    const listed = [];
    for await (const model of client.models.list()) listed.push({ id: model.id, type: model.type });
    const one = await client.models.retrieve("relay");
    const missing = await failing(() => client.models.retrieve("nope"));
    return { listed, retrieved: one.id, missing };
  },
  async errors() {
    const unknownModel = await failing(() =>
      client.messages.create({ model: "nope", max_tokens: 10, messages: [user("hi")] }),
    );
    const unknownModelStreamed = await failing(() =>
      client.messages.stream({ model: "nope", max_tokens: 10, messages: [user("hi")] }).finalMessage(),
    );
    const badRequest = await failing(() =>
      client.messages.create({ model: "relay", max_tokens: 10, messages: [] }),
    );
    const wrongKey = await failing(() =>
      new Anthropic({ apiKey: "wrong-key-0123456789", maxRetries: 0 }).messages.create({
        model: "relay",
        max_tokens: 10,
        messages: [user("hi")],
      }),
    );
    const upstreamFailed = await failing(() =>
      client.messages.create({ model: "broken", max_tokens: 10, messages: [user("hi")] }),
    );
    return { unknownModel, unknownModelStreamed, badRequest, wrongKey, upstreamFailed };
  },
};

const seen = {};
for (const [name, scenario] of Object.entries(scenarios)) {
  try {
    seen[name] = await scenario();
  } catch (e) {
    seen[name] = { thrown: String(e?.stack ?? e), ...(e instanceof Anthropic.APIError ? failure(e) : {}) };
  }
}
console.log(JSON.stringify(seen));
