// @ag-ui/client's HttpAgent against agenthost's /ag-ui (AG_UI_URL): it runs the scenarios
// AG_UI_SCENARIOS names (a JSON object: scenario → {agent, say, ...}, in order) as a front
// end does and prints one line of JSON with what the client saw in each. AG_UI_KEY, when
// set, goes as the bearer token. tests/adapters/ag_ui/test_http_agent.py (in-process
// agents) and test_served_http_agent.py (`agenthost serve` on the fake upstream) copy
// this script beside the client (.tools/clients, from tests/clients/install.sh) and run
// it with its Node 22.
import { HttpAgent } from "@ag-ui/client";

const base = process.env.AG_UI_URL;
const plan = JSON.parse(process.env.AG_UI_SCENARIOS);
const headers = process.env.AG_UI_KEY ? { Authorization: `Bearer ${process.env.AG_UI_KEY}` } : {};
let counter = 0;
const id = (prefix) => `${prefix}-${++counter}`;

function agentFor(name) {
  return new HttpAgent({ url: `${base}/${name}`, threadId: id("thread"), headers });
}

async function run(agent, parameters = {}) {
  const types = [];
  let error = null;
  let usage = null;
  let metadata = null;
  try {
    await agent.runAgent(parameters, {
      onEvent({ event }) {
        types.push(event.type);
        if (event.type === "RUN_ERROR") {
          error = `RUN_ERROR ${event.code}: ${event.message}`;
          metadata = event.metadata ?? null;
        }
        if (event.type === "RUN_FINISHED") usage = event.usage ?? null;
      },
    });
  } catch (e) {
    error = String(e?.message ?? e);
  }
  const texts = agent.messages
    .filter((m) => m.role === "assistant" && typeof m.content === "string")
    .map((m) => m.content);
  return { types, error, metadata, usage, text: texts.join(""), texts, messages: agent.messages };
}

const say = (agent, content) => agent.addMessage({ id: id("user"), role: "user", content });

const scenarios = {
  async text({ agent: name, say: words }) {
    const agent = agentFor(name);
    say(agent, words);
    const { types, text, error, usage } = await run(agent);
    return { types, text, error, usage };
  },
  async state({ agent: name, say: words }) {
    // A framework agent with state: the client keeps the last STATE_SNAPSHOT as agent.state.
    const agent = agentFor(name);
    say(agent, words);
    const snapshots = [];
    agent.subscribe({ onStateSnapshotEvent: ({ event }) => void snapshots.push(event.snapshot) });
    const { types, text, error } = await run(agent);
    return { types, text, error, snapshots, state: agent.state };
  },
  async ownTool({ agent: name, say: words }) {
    const agent = agentFor(name);
    say(agent, words);
    const { types, text, error, messages } = await run(agent);
    const calls = messages.flatMap((m) => m.toolCalls ?? []).map((c) => c.function);
    const results = messages.filter((m) => m.role === "tool").map((m) => m.content);
    return { types, text, error, calls, results };
  },
  async clientTool({ agent: name, say: words }) {
    const agent = agentFor(name);
    const tools = [
      {
        name: "get_weather",
        description: "The weather in a city.",
        parameters: { type: "object", properties: { city: { type: "string" } } },
      },
    ];
    say(agent, words);
    const first = await run(agent, { tools });
    const call = first.messages.flatMap((m) => m.toolCalls ?? [])[0];
    agent.addMessage({ id: id("tool"), role: "tool", toolCallId: call.id, content: "sunny" });
    const second = await run(agent, { tools });
    return { first: first.types, call: call.function, error: second.error, text: second.text };
  },
  async twoTurns({ agent: name, say: [first, then] }) {
    const agent = agentFor(name);
    say(agent, first);
    await run(agent);
    say(agent, then);
    const { texts, error } = await run(agent);
    return { texts, error };
  },
  async interrupt({ agent: name, say: words, answer }) {
    const agent = agentFor(name);
    say(agent, words);
    const first = await run(agent);
    const interrupts = agent.pendingInterrupts.map((i) => ({ message: i.message, reason: i.reason }));
    const resume = agent.pendingInterrupts.map((i) => ({
      interruptId: i.id,
      status: "resolved",
      payload: answer,
    }));
    const second = await run(agent, { resume });
    return { interrupts, firstError: first.error, text: second.text, error: second.error, left: agent.pendingInterrupts.length };
  },
  async approval({ agent: name, say: words }) {
    // A tool that needs approval: an interrupt (reason tool_approval) the resume answers.
    const answer = async (resume) => {
      const agent = agentFor(name);
      say(agent, words);
      const first = await run(agent);
      const [asked] = agent.pendingInterrupts;
      const second = await run(agent, { resume: [{ interruptId: asked.id, ...resume }] });
      const interrupt = { reason: asked.reason, toolCallId: asked.toolCallId, message: asked.message };
      return { interrupt, firstError: first.error, text: second.text, error: second.error, left: agent.pendingInterrupts.length };
    };
    return {
      approved: await answer({ status: "resolved", payload: { approve: true } }),
      declined: await answer({ status: "cancelled" }),
    };
  },
  async failing({ agent: name, say: words }) {
    const agent = agentFor(name);
    say(agent, words);
    const { types, error, metadata } = await run(agent);
    return { types, error, metadata };
  },
  async cancel({ agent: name, say: words, abortAfter }) {
    // The front end stops the run once it has seen an abortAfter event.
    const agent = agentFor(name);
    say(agent, words);
    const types = [];
    let error = null;
    await agent
      .runAgent(
        {},
        {
          onEvent({ event }) {
            types.push(event.type);
            if (event.type === "RUN_ERROR") error = `${event.code}: ${event.message}`;
            if (event.type === abortAfter && types.indexOf(abortAfter) === types.length - 1) {
              setTimeout(() => agent.abortRun(), 50);
            }
          },
        },
      )
      .catch((e) => {
        error = String(e?.name ?? e);
      });
    return { types, error, running: agent.isRunning };
  },
  async unknown({ agent: name }) {
    const agent = agentFor(name);
    say(agent, "hi");
    const { types, error } = await run(agent);
    return { types, error };
  },
};

const results = {};
for (const [name, parameters] of Object.entries(plan)) {
  results[name] = await scenarios[name](parameters);
}
process.stdout.write(`${JSON.stringify(results)}\n`);
