// An agent that asks its user (ask_user): the SDK's elicitation handler answers "Oslo".
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { connect, print } from "./common.mjs";

const client = await connect({ capabilities: { elicitation: { form: {} } } });
const asked = [];
client.setRequestHandler(ElicitRequestSchema, (request) => {
  asked.push({ message: request.params.message, schema: request.params.requestedSchema });
  return { action: "accept", content: { answer: "Oslo" } };
});
const result = await client.callTool({ name: "weather", arguments: { message: "weather?" } });
print({ asked, result });
await client.close();
