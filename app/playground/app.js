// agenthost playground: the agent list, a chat over /v1/responses, connect snippets.
// Plain JavaScript, no dependencies; talks only to the server that served it.
"use strict";

const $ = (id) => document.getElementById(id);
const store = window.sessionStorage; // the key and conversations live in this tab only
const state = { info: null, agent: null, running: null, generation: 0, following: null, followed: null };

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (name === "class") node.className = value;
    else if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
    else node.setAttribute(name, value);
  }
  for (const child of children) node.append(child);
  return node;
}

function headers(json) {
  const result = json ? { "Content-Type": "application/json" } : {};
  const key = store.getItem("agenthost.key");
  if (key) result.Authorization = "Bearer " + key;
  return result;
}

function notice(text) {
  $("notice").textContent = text || "";
  $("notice").hidden = !text;
}

function errorText(status, body) {
  try {
    const error = JSON.parse(body).error;
    if (error && error.message) return `${error.message} (${status}${error.code ? ", " + error.code : ""})`;
  } catch (_) { /* not JSON */ }
  return `HTTP ${status}`;
}

function askForKey(message) {
  $("key-form").hidden = false;
  notice(message);
  $("key").focus();
}

async function load() {
  let response;
  try {
    response = await fetch("playground/agents.json", { headers: headers(false) });
  } catch (exc) {
    notice("The server cannot be reached: " + exc.message);
    return;
  }
  const body = await response.text();
  if (response.status === 401) {
    askForKey(store.getItem("agenthost.key") ? "That API key is not accepted: " + errorText(401, body)
      : "This server needs an API key: enter one above.");
    return;
  }
  if (!response.ok) { notice("Cannot list the agents: " + errorText(response.status, body)); return; }
  notice("");
  state.info = JSON.parse(body);
  $("key-form").hidden = !state.info.auth;
  renderAgents();
}

function renderAgents() {
  const list = $("agent-list");
  list.replaceChildren();
  const agents = state.info.agents;
  if (!agents.length) { list.append(el("li", { class: "muted" }, "No agent for this key.")); return; }
  for (const agent of agents) {
    const button = el("button", { type: "button", "data-agent": agent.name, onclick: () => select(agent.name) },
      agent.name, el("small", {}, agent.description || ""));
    list.append(el("li", {}, button));
  }
  const wanted = hashName() || store.getItem("agenthost.agent");
  select(agents.some((a) => a.name === wanted) ? wanted : agents[0].name);
}

function select(name) {
  if (state.running) state.running.abort();
  const agent = state.info.agents.find((a) => a.name === name);
  state.agent = agent;
  store.setItem("agenthost.agent", name);
  if (location.hash.slice(1) !== encodeURIComponent(name)) history.replaceState(null, "", "#" + encodeURIComponent(name));
  for (const button of document.querySelectorAll("#agent-list button")) {
    button.setAttribute("aria-current", String(button.dataset.agent === name));
  }
  $("agent").hidden = false;
  $("agent-name").textContent = agent.name;
  $("agent-description").textContent = agent.description || "";
  const facts = $("agent-facts");
  facts.replaceChildren();
  const fact = (term, ...values) => facts.append(el("dt", {}, term), el("dd", {}, ...values));
  fact("kind", agent.kind + (agent.model ? ` · model ${agent.model}` : ""));
  if (agent.steps.length) fact("steps", agent.steps.join(" → "));
  fact("tools", ...(agent.tools.length ? agent.tools.map((t) => el("span", { class: "badge" }, t)) : ["none"]));
  fact("protocols", ...agent.protocols.map((p) => el("span", { class: "badge" }, LABELS[p] || p)));
  renderLog();
  renderConnect();
  if (state.following) state.following.abort();
  state.followed = null;
  $("run-events").replaceChildren();
  $("run-title").hidden = true;
  showTab(store.getItem("agenthost.tab") || "chat"); // a reload comes back to the same view
  const chat = agent.protocols.includes("openai");
  $("message").disabled = !chat;
  $("send").disabled = !chat;
  if (!chat) add("note", "This agent is not served over /v1 (see expose: in its config), so it cannot chat here: see Connect.");
}

// --- chat -----------------------------------------------------------------

function hashName() {
  try { return decodeURIComponent(location.hash.slice(1)); } catch (_) { return ""; }
}

const convKey = () => "agenthost.conv." + state.agent.name;

function conversation() {
  try { return JSON.parse(store.getItem(convKey())) || { previous: null, entries: [] }; } catch (_) { return { previous: null, entries: [] }; }
}

function saveConversation(conv, key) { store.setItem(key || convKey(), JSON.stringify(conv)); }

function entryNode(entry) {
  return el("li", { class: entry.kind }, entry.text);
}

function renderLog() {
  const log = $("log");
  log.replaceChildren(...conversation().entries.map(entryNode));
  log.scrollTop = log.scrollHeight;
  $("usage").textContent = "";
}

function add(kind, text) {
  const node = entryNode({ kind, text });
  $("log").append(node);
  $("log").scrollTop = $("log").scrollHeight;
  return node;
}

function who(agents) { return agents && agents.length ? agents.join(" → ") + ": " : ""; }

function progress(event, turn) {
  if (event.type === "agent") turn.push("step", "step: " + event.agents.join(" → "));
  else if (event.type === "tool_call") turn.push("tool", `${who(event.agents)}calls ${event.name}(${event.arguments})`);
  else if (event.type === "tool_result") {
    const output = event.output + (event.truncated ? " …" : "");
    turn.push(event.is_error ? "error" : "tool", `${who(event.agents)}${event.name} → ${output}`);
  }
}

// One turn: its entries as shown, saved once the server has stored the response.
function newTurn(text) {
  const entries = [{ kind: "user", text }];
  add("user", text);
  let answer = null;
  return {
    entries,
    push(kind, value) { entries.push({ kind, text: value }); answer = null; return add(kind, value); },
    text(delta) {
      if (!answer) { answer = { kind: "assistant", text: "" }; entries.push(answer); answer.node = add("assistant", ""); }
      answer.text += delta;
      answer.node.textContent = answer.text;
      $("log").scrollTop = $("log").scrollHeight;
    },
  };
}

async function send(text) {
  const agent = state.agent;
  const conv = conversation();
  const key = convKey();
  const generation = state.generation;
  const turn = newTurn(text);
  const controller = new AbortController();
  state.running = controller;
  setRunning(true);
  const body = { model: agent.name, input: text, stream: true, store: true };
  if ($("background").checked) body.background = true;
  if (conv.previous) body.previous_response_id = conv.previous;
  let finished = null;
  try {
    const response = await fetch("v1/responses", {
      method: "POST", headers: headers(true), body: JSON.stringify(body), signal: controller.signal,
    });
    if (!response.ok) {
      const message = errorText(response.status, await response.text());
      turn.push("error", message);
      if (response.status === 401) askForKey("This server needs an API key: " + message);
      if (response.status === 400 && message.includes("previous_response_not_found")) {
        turn.push("note", "The server no longer has this conversation: start a new one.");
      }
      return;
    }
    finished = await readStream(response.body, turn);
  } catch (exc) {
    if (exc.name === "AbortError") turn.push("note", "Stopped: the run was cancelled.");
    else turn.push("error", "The request failed: " + exc.message);
  } finally {
    state.running = null;
    setRunning(false);
    if (finished && finished.status !== "failed") conv.previous = finished.id;
    if (generation === state.generation) { // not after "New conversation"
      conv.entries.push(...turn.entries.map(({ kind, text: t }) => ({ kind, text: t })));
      saveConversation(conv, key);
    }
    $("message").focus();
  }
}

// Server-sent events over fetch: "event:"/"data:" lines, and the
// ": agenthost {...}" comments that carry tool calls and sub-agent steps.
async function readStream(stream, turn) {
  const reader = stream.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  let final = null;
  let failed = false;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value;
    let end;
    while ((end = buffer.search(/\r?\n\r?\n/)) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end).replace(/^\r?\n\r?\n/, "");
      for (const line of block.split(/\r?\n/)) {
        if (line.startsWith(": agenthost ")) { progress(JSON.parse(line.slice(12)), turn); continue; }
        if (!line.startsWith("data:")) continue;
        const data = JSON.parse(line.slice(5));
        if (data.type === "response.output_text.delta") turn.text(data.delta);
        else if (data.type === "response.output_item.done" && data.item.type === "function_call") {
          turn.push("tool", `asks the client to run ${data.item.name}(${data.item.arguments})`);
        } else if (data.type === "error") { failed = true; turn.push("error", `${data.message} (${data.code})`); }
        else if (data.type === "response.failed") {
          final = data.response;
          if (!failed && data.response.error) turn.push("error", data.response.error.message);
        } else if (data.type === "response.completed" || data.type === "response.incomplete") {
          final = data.response;
          showUsage(final);
        }
      }
    }
  }
  return final;
}

function showUsage(response) {
  const usage = response.usage;
  const status = response.status === "incomplete" ? ` · incomplete (${(response.incomplete_details || {}).reason || "?"})` : "";
  $("usage").textContent = usage ? `Tokens: ${usage.input_tokens} in, ${usage.output_tokens} out${status}` : status;
}

function setRunning(running) {
  $("send").disabled = running || !(state.agent && state.agent.protocols.includes("openai"));
  $("stop").disabled = !running;
  $("log").setAttribute("aria-busy", String(running)); // read the answer once, not per token
}

// --- connect snippets -------------------------------------------------------

const LABELS = { openai: "OpenAI /v1", a2a: "A2A", mcp: "MCP", acp: "ACP (IBM)", anthropic: "Anthropic /v1/messages", orchestrate: "watsonx Orchestrate", mcp_stdio: "MCP stdio", acp_zed: "Zed ACP stdio" };

function snippets(agent) {
  const info = state.info;
  const base = info.base_url;
  const url = (protocol) => base + info.prefixes[protocol];
  const auth = info.auth;
  const key = auth ? "KEY" : "unused";
  const name = agent.name;
  const json = (value) => JSON.stringify(value, null, 2);
  const has = (p) => agent.protocols.includes(p);
  const out = [];
  if (has("openai")) {
    out.push(["OpenAI API", [
      ["Python (openai SDK)", `from openai import OpenAI

client = OpenAI(base_url="${url("openai")}", api_key="${key}")${auth ? "" : "  # any key: auth is off"}
response = client.responses.create(model="${name}", input="hello")
print(response.output_text)`],
      ["curl", `curl ${url("openai")}/responses -H 'Content-Type: application/json' \\${auth ? "\n  -H 'Authorization: Bearer KEY' \\" : ""}
  -d '${JSON.stringify({ model: name, input: "hello" })}'`],
    ]]);
  }
  if (has("anthropic")) {
    out.push(["Anthropic Messages API", [
      ["Python (anthropic SDK)", `import anthropic

client = anthropic.Anthropic(base_url="${base}", api_key="${key}")${auth ? "" : "  # any key: auth is off"}
message = client.messages.create(model="${name}", max_tokens=1024, messages=[{"role": "user", "content": "hello"}])
print(message.content[0].text)`],
      ["Claude Code", `ANTHROPIC_BASE_URL=${base} ANTHROPIC_AUTH_TOKEN=${key} ANTHROPIC_MODEL=${name} claude`],
    ]]);
  }
  if (has("a2a")) {
    const a2aBase = (info.a2a_public_url || base).replace(/\/$/, "") + info.prefixes.a2a;
    const card = `${a2aBase}/${encodeURIComponent(name)}/.well-known/agent-card.json`;
    out.push(["A2A", [
      ["Agent card (public)", card],
      ["Python (a2a-sdk)", `import asyncio

from a2a.client import ${auth ? "AuthInterceptor, " : ""}ClientConfig, ${auth ? "CredentialService, " : ""}create_client
from a2a.helpers import new_text_message
from a2a.types import Role, SendMessageRequest
${auth ? `

class APIKey(CredentialService):
    async def get_credentials(self, scheme, context):
        return "KEY"  # sent as "Authorization: Bearer KEY"
` : ""}

async def main() -> None:
    client = await create_client("${a2aBase}/${name}", ClientConfig()${auth ? ", interceptors=[AuthInterceptor(APIKey())]" : ""})
    request = SendMessageRequest(message=new_text_message("hello", role=Role.ROLE_USER))
    async for event in client.send_message(request):
        print(event)


asyncio.run(main())`],
    ]]);
  }
  if (has("mcp") || has("mcp_stdio")) {
    const items = [];
    if (has("mcp")) {
      items.push(["Claude Code", `claude mcp add --transport http agenthost ${url("mcp")}${auth ? ' \\\n  --header "Authorization: Bearer KEY"' : ""}`]);
    }
    if (has("mcp_stdio")) {
      items.push(["Claude Desktop (claude_desktop_config.json)", json({
        mcpServers: { agenthost: { command: info.command, args: ["mcp-stdio", "--config", info.config] } },
      })]);
    }
    if (has("mcp") && !auth) {
      items.push(["MCP Inspector (Node ≥ 22)", `npx @modelcontextprotocol/inspector --cli ${url("mcp")} \\
    --transport http --method tools/call --tool-name ${name} --tool-arg message=hi`]);
    } else if (has("mcp_stdio")) {
      items.push(["MCP Inspector over stdio (Node ≥ 22)", `npx @modelcontextprotocol/inspector --cli -e AGENTHOST_CONFIG=${info.config} \\
    ${info.command} mcp-stdio --method tools/call --tool-name ${name} --tool-arg message=hi`]);
    }
    out.push([`MCP (the agent is the tool "${name}")`, items]);
  }
  if (has("acp")) {
    out.push(["ACP (IBM; new integrations should use A2A)", [["Python (acp-sdk)", `import asyncio

from acp_sdk.client import Client


async def main() -> None:
    async with Client(base_url="${url("acp")}"${auth ? ', headers={"Authorization": "Bearer KEY"}' : ""}) as client:
        run = await client.run_sync("Hello!", agent="${name}")
        print(run.output[-1])


asyncio.run(main())`]]]);
  }
  if (has("acp_zed")) {
    out.push(["Zed (Agent Client Protocol over stdio)", [["settings.json", json({
      agent_servers: { [`agenthost ${name}`]: { type: "custom", command: info.command, args: ["acp-stdio", name, "--config", info.config] } },
    })]]]);
  }
  return out;
}

async function copy(text, button) {
  try {
    await navigator.clipboard.writeText(text);
    button.textContent = "Copied";
  } catch (_) {
    button.textContent = "Select and copy";
  }
  setTimeout(() => { button.textContent = "Copy"; }, 1500);
}

function renderConnect() {
  const panel = $("connect");
  panel.replaceChildren();
  if (state.info.auth) panel.append(el("p", { class: "muted" }, "Keys are on: replace KEY with your API key."));
  for (const [title, items] of snippets(state.agent)) {
    panel.append(el("h3", {}, title));
    for (const [caption, text] of items) {
      const button = el("button", { type: "button", "aria-label": `Copy: ${title}, ${caption}` }, "Copy");
      button.addEventListener("click", () => copy(text, button));
      panel.append(el("figure", {}, el("figcaption", {}, el("span", {}, caption), button), el("pre", {}, el("code", {}, text))));
    }
  }
}

// --- wiring -------------------------------------------------------------------

// --- runs -------------------------------------------------------------------

const TABS = ["chat", "runs", "connect"];

async function loadRuns() {
  const agent = state.agent;
  const response = await fetch("playground/runs.json?agent=" + encodeURIComponent(agent.name), { headers: headers(false) });
  const body = await response.text();
  const list = $("run-list");
  list.replaceChildren();
  if (!response.ok) { list.append(el("tr", {}, el("td", { colspan: "4" }, errorText(response.status, body)))); return; }
  const runs = JSON.parse(body).runs;
  if (!runs.length) list.append(el("tr", {}, el("td", { colspan: "4", class: "muted" }, "No run yet: send a message with \"Run in the background\".")));
  for (const run of runs) {
    const open = el("button", { type: "button", onclick: () => followRun(run.id) }, run.id);
    const status = run.status + (run.attempt ? ` (resumed ×${run.attempt})` : "") + (run.error ? `: ${run.error.message}` : "");
    const row = el("tr", { "data-run": run.id }, el("td", {}, open), el("td", {}, run.protocol), el("td", {}, status),
      el("td", {}, new Date(run.created_at * 1000).toLocaleTimeString()));
    row.setAttribute("aria-current", String(run.id === state.followed));
    list.append(row);
  }
}

function runEvent(event, view) {
  const line = (kind, text) => { const node = el("li", { class: kind }, text); $("run-events").append(node); return node; };
  if (event.t === "text") {
    if (!view.text) view.text = line("assistant", "");
    view.text.textContent += event.x;
    return;
  }
  view.text = null;
  if (event.t === "tool_started") line("tool", `calls ${event.call.name}(${event.call.arguments})`);
  else if (event.t === "tool_finished") line("tool", `${event.result.name} → ${event.result.content}`);
  else if (event.t === "discarded") line("note", `Its replica stopped: what it had streamed of an unfinished step is discarded (${JSON.stringify(event.text)}); resumed on another replica.`);
  else if (event.t === "sub") line("tool", `${event.agent}: ${event.update.t}`);
  else if (event.t === "finished") line("note", "completed");
  else if (event.t === "failed") line("error", "failed: " + event.error.message);
  else if (event.t === "cancelled") line("note", "cancelled");
}

async function followRun(id) {
  if (state.following) state.following.abort();
  const controller = new AbortController();
  state.following = controller;
  state.followed = id;
  store.setItem("agenthost.run." + state.agent.name, id);
  for (const row of document.querySelectorAll("#run-list tr")) row.setAttribute("aria-current", String(row.dataset.run === id));
  $("run-title").hidden = false;
  $("run-title").textContent = "Run " + id;
  $("run-events").replaceChildren();
  const view = { text: null };
  try {
    const response = await fetch(`playground/runs/${encodeURIComponent(id)}/events`, { headers: headers(false), signal: controller.signal });
    if (!response.ok) { runEvent({ t: "failed", error: { message: errorText(response.status, await response.text()) } }, view); return; }
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value;
      let end;
      while ((end = buffer.search(/\r?\n\r?\n/)) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end).replace(/^\r?\n\r?\n/, "");
        for (const line of block.split(/\r?\n/)) if (line.startsWith("data:")) runEvent(JSON.parse(line.slice(5)), view);
      }
    }
    loadRuns();
  } catch (exc) {
    if (exc.name !== "AbortError") runEvent({ t: "failed", error: { message: "the stream broke: " + exc.message } }, view);
  }
}

function showRuns() {
  loadRuns();
  const remembered = store.getItem("agenthost.run." + state.agent.name);
  if (remembered && remembered !== state.followed) followRun(remembered);
}

function showTab(which) {
  store.setItem("agenthost.tab", which);
  if (which === "runs") showRuns();
  for (const name of TABS) {
    const on = name === which;
    $("tab-" + name).setAttribute("aria-selected", String(on));
    $("tab-" + name).tabIndex = on ? 0 : -1;
    $(name).hidden = !on;
  }
}

document.addEventListener("DOMContentLoaded", () => {
  for (const name of TABS) $("tab-" + name).addEventListener("click", () => showTab(name));
  $("runs-refresh").addEventListener("click", () => loadRuns());
  $("agent").querySelector(".tabs").addEventListener("keydown", (event) => {
    if (event.key !== "ArrowLeft" && event.key !== "ArrowRight") return;
    const current = TABS.findIndex((name) => $("tab-" + name).getAttribute("aria-selected") === "true");
    const next = TABS[(current + (event.key === "ArrowRight" ? 1 : TABS.length - 1)) % TABS.length];
    showTab(next);
    $("tab-" + next).focus();
  });
  $("key-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const key = $("key").value.trim();
    if (key) store.setItem("agenthost.key", key); else store.removeItem("agenthost.key");
    $("key").value = "";
    load();
  });
  $("send-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const text = $("message").value.trim();
    if (!text || state.running || !state.agent) return;
    $("message").value = "";
    send(text);
  });
  $("message").addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      $("send-form").requestSubmit();
    }
  });
  $("stop").addEventListener("click", () => { if (state.running) state.running.abort(); });
  $("new").addEventListener("click", () => {
    if (state.running) state.running.abort();
    state.generation += 1;
    store.removeItem(convKey());
    renderLog();
    $("message").focus();
  });
  window.addEventListener("hashchange", () => {
    const name = hashName();
    if (state.info && state.info.agents.some((a) => a.name === name)) select(name);
  });
  load();
});
