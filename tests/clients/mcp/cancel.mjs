// Cancel a streaming agent call with an AbortSignal once its first progress arrives.
// The SDK sends notifications/cancelled; the client stays connected (the call's own
// stream open) until the test, having seen the upstream stream close, writes a line.
import { connect, failure, nextLine, print } from "./common.mjs";

const client = await connect();
const controller = new AbortController();
let progress = 0;
try {
  await client.callTool({ name: "relay", arguments: { message: "go" } }, undefined, {
    signal: controller.signal,
    onprogress: () => {
      progress += 1;
      if (progress === 1) controller.abort("user pressed stop");
    },
  });
  print({ outcome: "finished", progress });
} catch (error) {
  print({ outcome: "aborted", progress, error: failure(error) });
}
await nextLine();
await client.close();
