// tools/list, a call with a bad argument, an unknown tool, and a connection with a wrong key.
import { connect, failure, print } from "./common.mjs";

const client = await connect();
const { tools } = await client.listTools();
const output = { tools: tools.map((t) => t.name) };
for (const [name, args] of [["adder", { message: 3 }], ["nobody", { message: "hi" }]]) {
  try {
    output[name] = { result: await client.callTool({ name, arguments: args }) };
  } catch (error) {
    output[name] = failure(error);
  }
}
await client.close();
try {
  await connect({ key: "a-wrong-key-0123456789" });
  output.wrongKey = "connected";
} catch (error) {
  output.wrongKey = failure(error);
}
print(output);
