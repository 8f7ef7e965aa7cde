// agenthost playground: the agent list, a chat over /v1/responses, the AI SDK UI
// message stream (ai-sdk.js) or AG-UI, connect snippets.
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
  const served = Object.keys(CHATS).filter((p) => agent.protocols.includes(p));
  for (const option of $("protocol").options) option.disabled = !served.includes(option.value);
  const wanted = store.getItem("agenthost.protocol");
  $("protocol").value = served.includes(wanted) ? wanted : served[0] || "openai";
  showProtocol();
  renderConnect();
  if (state.following) state.following.abort();
  state.followed = null;
  $("run-events").replaceChildren();
  $("run-title").hidden = true;
  showTab(store.getItem("agenthost.tab") || "chat"); // a reload comes back to the same view
  if (!served.length) add({ kind: "note", text: "This agent is not served over /v1, /ai-sdk or /ag-ui (see expose: in its config), so it cannot chat here: see Connect." });
}

// --- chat -----------------------------------------------------------------

// The protocols the page chats over; each keeps its own conversation per agent.
const CHATS = { openai: "OpenAI Responses (/v1/responses)", ai_sdk: "AI SDK UI message stream (/ai-sdk)", ag_ui: "AG-UI (/ag-ui)" };
const PREFIXES = { openai: "agenthost.conv.", ai_sdk: "agenthost.aisdk.", ag_ui: "agenthost.agui." };

function hashName() {
  try { return decodeURIComponent(location.hash.slice(1)); } catch (_) { return ""; }
}

const protocol = () => $("protocol").value;
const canChat = () => Boolean(state.agent && state.agent.protocols.includes(protocol()));
const convKey = () => PREFIXES[protocol()] + state.agent.name;

function conversation() {
  const fresh = () => ({
    openai: { previous: null, entries: [] },
    ai_sdk: { chat: UIStream.newId("chat"), messages: [], entries: [] },
    ag_ui: { thread: UIStream.newId("thread"), interrupts: [], entries: [] }, // the server keeps the thread
  })[protocol()];
  try { return JSON.parse(store.getItem(convKey())) || fresh(); } catch (_) { return fresh(); }
}

function saveConversation(conv, key) { store.setItem(key || convKey(), JSON.stringify(conv)); }

// An approval shows Approve/Deny while the chat waits for it, else how it was answered.
function entryNode(entry, pending) {
  const node = el("li", { class: entry.kind }, entry.text);
  if (entry.kind !== "approval") return node;
  if (entry.answer) node.append(el("span", { class: "answer" }, " · " + entry.answer));
  else if (pending) {
    node.append(el("span", { class: "actions" },
      el("button", { type: "button", class: "primary", onclick: () => approve(entry.call, true) }, "Approve"),
      el("button", { type: "button", onclick: () => approve(entry.call, false) }, "Deny")));
  } else node.append(el("span", { class: "answer" }, " · not answered"));
  return node;
}

function renderLog() {
  const conv = conversation();
  const waiting = askedCalls(conv);
  const log = $("log");
  log.replaceChildren(...conv.entries.map((e) => entryNode(e, waiting.includes(e.call))));
  log.scrollTop = log.scrollHeight;
}

// The calls this conversation waits to have approved or denied.
function askedCalls(conv) {
  if (conv.interrupts) return conv.interrupts.filter((i) => i.reason === "tool_approval" && i.answer === undefined).map((i) => i.id);
  return (UIStream.waiting(conv.messages || []).approvals || []).map((p) => p.toolCallId);
}

function add(entry) {
  const node = entryNode(entry, true);
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

// One turn: its entries as shown (the user's text first, if any), saved when it ends.
function newTurn(text) {
  const entries = [];
  let open = null; // the answer or reasoning streaming now
  const turn = {
    entries,
    push(kind, value, extra) {
      const entry = { kind, text: value, ...extra };
      entries.push(entry);
      open = null;
      return add(entry);
    },
    text(delta, kind = "assistant") {
      if (!open || open.kind !== kind) { open = { kind, text: "" }; entries.push(open); open.node = add(open); }
      open.text += delta;
      open.node.textContent = open.text;
      $("log").scrollTop = $("log").scrollHeight;
    },
    close() { open = null; },
  };
  if (text !== null) turn.push("user", text);
  return turn;
}

function send(text) {
  const conv = conversation();
  const turn = newTurn(text);
  if (protocol() === "openai") return exchange(conv, turn, (signal) => chatResponses(conv, text, turn, signal));
  if (protocol() === "ag_ui") {
    const question = conv.interrupts.find((i) => i.reason !== "tool_approval"); // ask_user's: the text answers it
    const input = question ? { messages: [], resume: [{ interruptId: question.id, status: "resolved", payload: text }] }
      : { messages: [{ id: UIStream.newId("msg"), role: "user", content: text }] };
    return exchange(conv, turn, (signal) => chatAGUI(conv, input, turn, signal));
  }
  const messages = structuredClone(conv.messages);
  const { question } = UIStream.waiting(messages);
  if (question) Object.assign(question, { state: "output-available", output: text }); // ask_user's answer
  else messages.push(UIStream.userMessage(text));
  return exchange(conv, turn, (signal) => chatUI(conv, messages, turn, signal));
}

// Approve or deny a call the chat waits for; once every asked call is answered, the
// chat goes on (what useChat's lastAssistantMessageIsCompleteWithApprovalResponses does).
function approve(id, approved) {
  if (state.running) return;
  const conv = conversation();
  if (conv.interrupts) return resumeAGUI(conv, id, approved);
  const part = (UIStream.waiting(conv.messages).approvals || []).find((p) => p.toolCallId === id);
  if (!part) return;
  Object.assign(part, { state: "approval-responded", approval: { ...part.approval, approved } });
  for (const entry of conv.entries) if (entry.call === id) entry.answer = approved ? "approved" : "denied";
  saveConversation(conv);
  renderLog();
  if ((UIStream.waiting(conv.messages).approvals || []).length) return;
  const turn = newTurn(null);
  exchange(conv, turn, (signal) => chatUI(conv, structuredClone(conv.messages), turn, signal));
}

// Runs one request; the turn's entries are saved with the conversation as it ends.
async function exchange(conv, turn, request) {
  const key = convKey();
  const generation = state.generation;
  const controller = new AbortController();
  state.running = controller;
  setRunning(true);
  try {
    await request(controller.signal);
  } catch (exc) {
    if (exc.name === "AbortError") turn.push("note", "Stopped: the run was cancelled.");
    else turn.push("error", "The request failed: " + exc.message);
  } finally {
    state.running = null;
    setRunning(false);
    if (generation === state.generation) { // not after "New conversation"
      conv.entries.push(...turn.entries.map(({ node, ...entry }) => entry));
      saveConversation(conv, key);
      if (key === convKey() && turn.entries.some((e) => e.kind === "approval")) renderLog();
    }
    $("message").focus();
  }
}

// AG-UI answers approvals with `resume` (all the asked calls at once, as a form each).
function resumeAGUI(conv, id, approved) {
  const asked = conv.interrupts.find((i) => i.id === id && i.answer === undefined);
  if (!asked) return;
  asked.answer = approved;
  for (const entry of conv.entries) if (entry.call === id) entry.answer = approved ? "approved" : "denied";
  saveConversation(conv);
  renderLog();
  if (askedCalls(conv).length) return;
  const resume = conv.interrupts.filter((i) => i.answer !== undefined)
    .map((i) => ({ interruptId: i.id, status: "resolved", payload: { approve: i.answer } }));
  const turn = newTurn(null);
  exchange(conv, turn, (signal) => chatAGUI(conv, { messages: [], resume }, turn, signal));
}

async function refused(response, turn) {
  const message = errorText(response.status, await response.text());
  turn.push("error", message);
  if (response.status === 401) askForKey("This server needs an API key: " + message);
  return message;
}

async function chatResponses(conv, text, turn, signal) {
  const body = { model: state.agent.name, input: text, stream: true, store: true };
  if ($("background").checked) body.background = true;
  if (conv.previous) body.previous_response_id = conv.previous;
  const response = await post("v1/responses", body, signal);
  if (!response.ok) {
    const message = await refused(response, turn);
    if (response.status === 400 && message.includes("previous_response_not_found")) {
      turn.push("note", "The server no longer has this conversation: start a new one.");
    }
    return;
  }
  const finished = await readStream(response.body, turn);
  if (finished && finished.status !== "failed") conv.previous = finished.id;
}

// The AI SDK UI message stream: the whole chat as UIMessages, the answer folded into
// the assistant message the chat keeps (once it finished: a failed turn adds nothing).
async function chatUI(conv, messages, turn, signal) {
  const response = await post("ai-sdk/" + encodeURIComponent(state.agent.name), UIStream.body(conv.chat, messages), signal);
  if (!response.ok) { await refused(response, turn); return; }
  const last = messages[messages.length - 1];
  const message = last.role === "assistant" ? last : { id: "", role: "assistant", parts: [] };
  if (message !== last) messages.push(message);
  const open = {};
  let finished = false;
  await readEvents(response.body, (line) => {
    if (!line.startsWith("data:") || line.slice(5).trim() === "[DONE]") return;
    const shown = UIStream.apply(message, JSON.parse(line.slice(5)), open);
    if (shown) finished = showChunk(shown, turn) || finished;
  });
  if (finished) conv.messages = messages;
}

// AG-UI: a RunAgentInput with only what is new (the server keeps the thread), answered
// by AG-UI events; a run that ends asking leaves its interrupts open.
async function chatAGUI(conv, input, turn, signal) {
  const body = { threadId: conv.thread, runId: UIStream.newId("run"), ...input };
  const response = await post("ag-ui/" + encodeURIComponent(state.agent.name), body, signal);
  if (!response.ok) { await refused(response, turn); return; }
  const calls = {};
  await readEvents(response.body, (line) => {
    if (!line.startsWith("data:")) return;
    const event = JSON.parse(line.slice(5));
    const call = calls[event.toolCallId];
    switch (event.type) {
      case "TEXT_MESSAGE_START": case "TEXT_MESSAGE_END": case "REASONING_MESSAGE_END": turn.close(); break;
      case "TEXT_MESSAGE_CONTENT": turn.text(event.delta); break;
      case "REASONING_MESSAGE_CONTENT": turn.text(event.delta, "reasoning"); break;
      case "TOOL_CALL_START": calls[event.toolCallId] = { name: event.toolCallName, args: "" }; break;
      case "TOOL_CALL_ARGS": call.args += event.delta; break;
      case "TOOL_CALL_END": turn.push("tool", `calls ${call.name}(${call.args})`); break;
      case "TOOL_CALL_RESULT": turn.push("tool", `${call ? call.name : event.toolCallId} → ${event.content}`); break;
      case "RUN_ERROR": turn.push("error", `${event.message} (${event.code})`); break;
      case "RUN_FINISHED": {
        const outcome = event.outcome || {};
        conv.interrupts = outcome.type === "interrupt" ? outcome.interrupts : [];
        for (const asked of conv.interrupts) {
          if (asked.reason === "tool_approval") turn.push("approval", asked.message, { call: asked.id });
          else turn.push("tool", `asks you: ${asked.message} (your next message answers)`);
        }
        const usage = (event.usage || [])[0];
        $("usage").textContent = usage ? `Tokens: ${usage.inputTokens} in, ${usage.outputTokens} out` : "";
        break;
      }
    }
  });
}

function showChunk(shown, turn) {
  const part = shown.part;
  const name = part && UIStream.toolName(part);
  const input = part && JSON.stringify(part.input);
  switch (shown.show) {
    case "text": turn.text(shown.delta); break;
    case "reasoning": turn.text(shown.delta, "reasoning"); break;
    case "end": turn.close(); break;
    case "call":
      if (name === "ask_user") turn.push("tool", `asks you: ${part.input.question} (your next message answers)`);
      else turn.push("tool", `calls ${name}(${input})`);
      break;
    case "approval": turn.push("approval", `${name}(${input}) needs your approval`, { call: part.toolCallId }); break;
    case "output":
      if (part.state === "output-error") turn.push("error", `${name} failed: ${part.errorText}`);
      else turn.push("tool", `${name} → ${typeof part.output === "string" ? part.output : JSON.stringify(part.output)}`);
      break;
    case "denied": turn.push("note", `${name} was denied: it did not run.`); break;
    case "error": turn.push("error", shown.text); break;
    case "finish": {
      const usage = shown.usage;
      const reason = shown.reason === "stop" ? "" : ` · finish: ${shown.reason}`;
      $("usage").textContent = (usage ? `Tokens: ${usage.inputTokens} in, ${usage.outputTokens} out` : "") + reason;
      return true;
    }
  }
  return false;
}

// A POST whose request and raw answer show under "Wire", as a browser's network tab would.
async function post(path, body, signal) {
  const wire = $("wire-log");
  wire.replaceChildren(`POST /${path}\n${JSON.stringify(body, null, 2)}\n\n`);
  const response = await fetch(path, { method: "POST", headers: headers(true), body: JSON.stringify(body), signal });
  const shown = ["content-type", "x-vercel-ai-ui-message-stream"].filter((h) => response.headers.has(h));
  wire.append(`HTTP ${response.status}\n${shown.map((h) => `${h}: ${response.headers.get(h)}\n`).join("")}\n`);
  return response;
}

// Server-sent events over fetch: each line of each event, in order (the raw ones
// shown under "Wire" too, up to a bound).
async function readEvents(stream, onLine, wire = $("wire-log")) {
  const reader = stream.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  let shown = 0;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    let end;
    while ((end = buffer.search(/\r?\n\r?\n/)) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end).replace(/^\r?\n\r?\n/, "");
      if (wire && shown < 2000) wire.append(block + "\n\n");
      else if (wire && shown === 2000) wire.append("… (the rest is not shown)\n");
      shown += 1;
      for (const line of block.split(/\r?\n/)) onLine(line);
    }
  }
}

// /v1/responses: "event:"/"data:" lines, and the ": agenthost {...}" comments that
// carry tool calls and sub-agent steps.
async function readStream(stream, turn) {
  let final = null;
  let failed = false;
  await readEvents(stream, (line) => {
    if (line.startsWith(": agenthost ")) { progress(JSON.parse(line.slice(12)), turn); return; }
    if (!line.startsWith("data:")) return;
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
  });
  return final;
}

function showUsage(response) {
  const usage = response.usage;
  const status = response.status === "incomplete" ? ` · incomplete (${(response.incomplete_details || {}).reason || "?"})` : "";
  $("usage").textContent = usage ? `Tokens: ${usage.input_tokens} in, ${usage.output_tokens} out${status}` : status;
}

function setRunning(running) {
  $("send").disabled = running || !canChat();
  $("stop").disabled = !running;
  $("protocol").disabled = running;
  $("log").setAttribute("aria-busy", String(running)); // read the answer once, not per token
}

// The chat's protocol: the conversation kept for it, and what only /v1/responses has.
function showProtocol() {
  store.setItem("agenthost.protocol", protocol());
  $("background-option").hidden = protocol() !== "openai";
  $("usage").textContent = "";
  renderLog();
  setRunning(false);
  $("message").disabled = !canChat();
}

// --- connect snippets -------------------------------------------------------

const LABELS = { openai: "OpenAI /v1", a2a: "A2A", mcp: "MCP", acp: "ACP (IBM)", ag_ui: "AG-UI", ai_sdk: "AI SDK", anthropic: "Anthropic /v1/messages", orchestrate: "watsonx Orchestrate", mcp_stdio: "MCP stdio", acp_zed: "Zed ACP stdio" };

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
  if (has("ai_sdk")) {
    const api = `${url("ai_sdk")}/${encodeURIComponent(name)}`;
    const body = { id: "chat-1", messages: [{ id: "msg-1", role: "user", parts: [{ type: "text", text: "hello" }] }] };
    out.push(["Vercel AI SDK (the UI message stream; the Chat tab's AI SDK mode)", [
      ["React (ai 6+, @ai-sdk/react)", `import { useChat } from "@ai-sdk/react";
import { DefaultChatTransport, lastAssistantMessageIsCompleteWithApprovalResponses } from "ai";

// A page on another origin needs it in AGENTHOST_CORS_ORIGINS.
const { messages, sendMessage, addToolApprovalResponse } = useChat({
  transport: new DefaultChatTransport({
    api: "${api}",${auth ? '\n    headers: { Authorization: "Bearer KEY" },' : ""}
  }),
  // a tool with approval: required waits for addToolApprovalResponse({ id, approved })
  sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
});`],
      ["curl (the raw chunks)", `curl -N ${api} -H 'Content-Type: application/json' \\${auth ? "\n  -H 'Authorization: Bearer KEY' \\" : ""}
  -d '${JSON.stringify(body)}'`],
    ]]);
  }
  if (has("ag_ui")) {
    out.push(["AG-UI (the Chat tab's AG-UI mode)", [["JavaScript (@ag-ui/client; CopilotKit uses it)", `import { HttpAgent } from "@ag-ui/client";

// A page on another origin needs it in AGENTHOST_CORS_ORIGINS.
const agent = new HttpAgent({ url: "${url("ag_ui")}/${encodeURIComponent(name)}"${auth ? ', headers: { Authorization: "Bearer KEY" }' : ""} });
agent.addMessage({ id: crypto.randomUUID(), role: "user", content: "hello" });
await agent.runAgent({}, { onTextMessageContentEvent: ({ event }) => console.log(event.delta) });`]]]);
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
    await readEvents(response.body, (line) => { if (line.startsWith("data:")) runEvent(JSON.parse(line.slice(5)), view); }, null);
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
  $("protocol").addEventListener("change", () => { if (!state.running) showProtocol(); });
  $("stop").addEventListener("click", () => { if (state.running) state.running.abort(); });
  $("new").addEventListener("click", () => {
    if (state.running) state.running.abort();
    state.generation += 1;
    store.removeItem(convKey());
    $("usage").textContent = "";
    renderLog();
    $("message").focus();
  });
  window.addEventListener("hashchange", () => {
    const name = hashName();
    if (state.info && state.info.agents.some((a) => a.name === name)) select(name);
  });
  load();
});
