// logging/setLevel, then the run events that arrive as notifications/message.
import { LoggingMessageNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { connect, print } from "./common.mjs";

const client = await connect();
const received = [];
client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
  const { level, logger, data } = notification.params;
  received.push({ level, logger, event: data?.event, tool: data?.tool });
});
const phases = {};
// At each level, three calls: a tool that works, a tool that fails, a run that fails.
async function calls(level) {
  if (level !== "default") await client.setLoggingLevel(level);
  for (const name of ["adder", "exploder", "broken"]) {
    await client.callTool({ name, arguments: { message: "go" } });
  }
  phases[level] = received.splice(0);
}
for (const level of ["default", "debug", "warning", "error", "critical"]) await calls(level);
print({ logging: client.getServerCapabilities()?.logging ?? null, phases });
await client.close();
