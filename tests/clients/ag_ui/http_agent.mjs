// @ag-ui/client's HttpAgent against agenthost's /ag-ui (AG_UI_URL): each scenario
// runs the client as a front end does and prints one line of JSON with what it saw.
// tests/adapters/ag_ui/test_http_agent.py copies this script beside the client
// (.tools/clients, from tests/clients/install.sh) and runs it with its Node 22.
import { HttpAgent } from "@ag-ui/client";

const base = process.env.AG_UI_URL;
let counter = 0;
const id = (prefix) => `${prefix}-${++counter}`;

function agentFor(name) {
  return new HttpAgent({ url: `${base}/${name}`, threadId: id("thread") });
}

async function run(agent, parameters = {}) {
  const types = [];
  let error = null;
  try {
    await agent.runAgent(parameters, {
      onEvent({ event }) {
        types.push(event.type);
        if (event.type === "RUN_ERROR") error = `RUN_ERROR ${event.code}: ${event.message}`;
      },
    });
  } catch (e) {
    error = String(e?.message ?? e);
  }
  const texts = agent.messages
    .filter((m) => m.role === "assistant" && typeof m.content === "string")
    .map((m) => m.content);
  return { types, error, text: texts.join(""), texts, messages: agent.messages };
}

const say = (agent, content) => agent.addMessage({ id: id("user"), role: "user", content });

const scenarios = {
  async text() {
    const agent = agentFor("echo");
    say(agent, "hello there");
    const { types, text, error } = await run(agent);
    return { types, text, error };
  },
  async ownTool() {
    const agent = agentFor("adder");
    say(agent, "2 + 3?");
    const { types, text, error, messages } = await run(agent);
    const calls = messages.flatMap((m) => m.toolCalls ?? []).map((c) => c.function);
    const results = messages.filter((m) => m.role === "tool").map((m) => m.content);
    return { types, text, error, calls, results };
  },
  async clientTool() {
    const agent = agentFor("weather");
    const tools = [
      {
        name: "get_weather",
        description: "The weather in a city.",
        parameters: { type: "object", properties: { city: { type: "string" } } },
      },
    ];
    say(agent, "weather in Paris?");
    const first = await run(agent, { tools });
    const call = first.messages.flatMap((m) => m.toolCalls ?? [])[0];
    agent.addMessage({ id: id("tool"), role: "tool", toolCallId: call.id, content: "sunny" });
    const second = await run(agent, { tools });
    return { first: first.types, call: call.function, error: second.error, text: second.text };
  },
  async twoTurns() {
    const agent = agentFor("t");
    say(agent, "my name is Ada");
    await run(agent);
    say(agent, "what is my name?");
    const { texts, error } = await run(agent);
    return { texts, error };
  },
  async interrupt() {
    const agent = agentFor("asker");
    say(agent, "hi");
    const first = await run(agent);
    const interrupts = agent.pendingInterrupts.map((i) => ({ message: i.message, reason: i.reason }));
    const resume = agent.pendingInterrupts.map((i) => ({
      interruptId: i.id,
      status: "resolved",
      payload: "Ada",
    }));
    const second = await run(agent, { resume });
    return { interrupts, firstError: first.error, text: second.text, error: second.error, left: agent.pendingInterrupts.length };
  },
  async approval() {
    // A tool that needs approval: an interrupt (reason tool_approval) the resume answers.
    const answer = async (resume) => {
      const agent = agentFor("deleter");
      say(agent, "tidy up");
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
  async failing() {
    const agent = agentFor("failing");
    say(agent, "hi");
    const { types, error } = await run(agent);
    return { types, error };
  },
  async cancel() {
    // The front end stops the run while the agent's tool is working.
    const agent = agentFor("slow");
    say(agent, "wait");
    const types = [];
    let error = null;
    await agent
      .runAgent(
        {},
        {
          onEvent({ event }) {
            types.push(event.type);
            if (event.type === "RUN_ERROR") error = `${event.code}: ${event.message}`;
            if (event.type === "TOOL_CALL_END") setTimeout(() => agent.abortRun(), 50);
          },
        },
      )
      .catch((e) => {
        error = String(e?.name ?? e);
      });
    return { types, error, running: agent.isRunning };
  },
  async unknown() {
    const agent = agentFor("nobody");
    say(agent, "hi");
    const { types, error } = await run(agent);
    return { types, error };
  },
};

const results = {};
for (const [name, scenario] of Object.entries(scenarios)) {
  results[name] = await scenario();
}
process.stdout.write(`${JSON.stringify(results)}\n`);
