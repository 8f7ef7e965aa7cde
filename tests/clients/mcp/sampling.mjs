// A `model: mcp:sampling` agent: the SDK's sampling handler is its model, answering "Paris".
import { CreateMessageRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { connect, print } from "./common.mjs";

const client = await connect({ capabilities: { sampling: {} } });
const asked = [];
client.setRequestHandler(CreateMessageRequestSchema, (request) => {
  const { systemPrompt, messages, maxTokens } = request.params;
  asked.push({ systemPrompt, messages, maxTokens });
  return { role: "assistant", content: { type: "text", text: "Paris" }, model: "client-llm" };
});
const result = await client.callTool({
  name: "borrowed",
  arguments: { message: "Capital of France?" },
});
print({ asked, result });
await client.close();
