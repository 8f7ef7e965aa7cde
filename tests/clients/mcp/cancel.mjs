// Stop a streaming agent call two ways, each once its first progress arrives:
// 1. an AbortSignal: the SDK sends notifications/cancelled, and the client stays
//    connected (the call's own stream open) until the test, having seen the upstream
//    stream close, writes a line;
// 2. with the argument "close" (stateless mode): the client closes its transport
//    mid-call, cutting the call's stream. In stateful mode a cut stream can be
//    resumed (Last-Event-ID), so it does not cancel there: the spec's cancel is the
//    notification.
import { connect, failure, nextLine, print } from "./common.mjs";

function relay(client, options) {
  return client.callTool({ name: "relay", arguments: { message: "go" } }, undefined, options);
}

const client = await connect();
const controller = new AbortController();
let progress = 0;
try {
  await relay(client, {
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
if (process.argv[2] !== "close") process.exit(0);

const closing = await connect();
let first;
const firstProgress = new Promise((resolve) => (first = resolve));
const call = relay(closing, { onprogress: first }).then(
  () => "finished",
  (error) => failure(error),
);
await firstProgress;
await closing.close();
print({ outcome: "closed", call: await call });
