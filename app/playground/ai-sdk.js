// The AI SDK UI message stream from a browser, as useChat runs it, with no library:
// UIMessages out (the body DefaultChatTransport posts to /ai-sdk/{agent}), and each
// SSE chunk back folded into the assistant message. app.js draws what apply() returns.
"use strict";

const UIStream = {
  // crypto.randomUUID needs a secure context; a server reached over plain http on
  // another host is not one, getRandomValues works everywhere.
  newId(prefix) {
    const bytes = crypto.getRandomValues(new Uint8Array(12));
    return prefix + "-" + Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  },

  userMessage(text) {
    return { id: UIStream.newId("msg"), role: "user", parts: [{ type: "text", text }] };
  },

  // What DefaultChatTransport sends: the chat's id, all of its messages, why, and the
  // message the answer continues (the last one, when it is the assistant's).
  body(chat, messages) {
    const last = messages[messages.length - 1];
    const body = { id: chat, messages, trigger: "submit-message" };
    if (last.role === "assistant") body.messageId = last.id;
    return body;
  },

  toolName(part) { return part.type === "dynamic-tool" ? part.toolName : part.type.slice(5); },

  isTool(part) { return part.type.startsWith("tool-") || part.type === "dynamic-tool"; },

  toolPart(message, id) {
    return message.parts.find((p) => UIStream.isTool(p) && p.toolCallId === id);
  },

  // The call of the assistant's last message a user answers now: a tool that asked for
  // approval, or `ask_user`'s question (a client tool: the next text is its output).
  waiting(messages) {
    const last = messages[messages.length - 1];
    if (!last || last.role !== "assistant") return {};
    const tools = last.parts.filter(UIStream.isTool);
    return {
      approvals: tools.filter((p) => p.state === "approval-requested"),
      question: tools.find((p) => UIStream.toolName(p) === "ask_user" && p.state === "input-available"),
    };
  },

  // Folds one chunk into `message` (as useChat's processUIMessageStream does) and says
  // what changed, for the page to show: {show, ...}, or null for bookkeeping chunks.
  apply(message, chunk, open) {
    const tool = () => UIStream.toolPart(message, chunk.toolCallId);
    switch (chunk.type) {
      case "start":
        if (chunk.messageId) message.id = chunk.messageId;
        return null;
      case "start-step":
        message.parts.push({ type: "step-start" });
        return null;
      case "text-start":
      case "reasoning-start": {
        const part = { type: chunk.type.split("-")[0], text: "", state: "streaming" };
        open[chunk.id] = part;
        message.parts.push(part);
        return null;
      }
      case "text-delta":
      case "reasoning-delta":
        open[chunk.id].text += chunk.delta;
        return { show: chunk.type.split("-")[0], delta: chunk.delta };
      case "text-end":
      case "reasoning-end":
        open[chunk.id].state = "done";
        delete open[chunk.id];
        return { show: "end" };
      case "tool-input-start":
        message.parts.push({ type: "tool-" + chunk.toolName, toolCallId: chunk.toolCallId, state: "input-streaming", input: undefined });
        return null;
      case "tool-input-delta":
        return null; // the arguments as they stream: tool-input-available has them whole
      case "tool-input-available": {
        let part = tool();
        if (!part) { part = { type: "tool-" + chunk.toolName, toolCallId: chunk.toolCallId }; message.parts.push(part); }
        Object.assign(part, { state: "input-available", input: chunk.input });
        return { show: "call", part };
      }
      case "tool-approval-request": {
        const part = tool();
        Object.assign(part, { state: "approval-requested", approval: { id: chunk.approvalId } });
        return { show: "approval", part };
      }
      case "tool-output-available": {
        const part = tool();
        Object.assign(part, { state: "output-available", output: chunk.output });
        return { show: "output", part };
      }
      case "tool-output-error": {
        const part = tool();
        Object.assign(part, { state: "output-error", errorText: chunk.errorText });
        return { show: "output", part };
      }
      case "tool-output-denied": {
        const part = tool();
        part.state = "output-denied";
        return { show: "denied", part };
      }
      case "finish":
        if (chunk.messageMetadata) message.metadata = chunk.messageMetadata;
        return { show: "finish", reason: chunk.finishReason, usage: (chunk.messageMetadata || {}).usage };
      case "error":
        return { show: "error", text: chunk.errorText };
      default:
        return null; // finish-step, and chunks this server does not send
    }
  },
};
