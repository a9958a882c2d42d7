// The peer of the benchmarks: the ACP handshake acpprobe does, written on the official
// TypeScript SDK (@agentclientprotocol/sdk, pinned in ../package.json), the library acp-probe
// is built on. It spawns the agent given after "--" in its own process group, sends initialize
// and session/new through the SDK's client app over ndJsonStream, closes the session with
// session/close when the agent advertises it (as acpprobe's teardown does), closes stdin and
// stops the agent as bench/rawclient does: by default it waits for the agent to exit (2 s
// grace, SIGTERM, 2 s, SIGKILL to the group); with --kill it signals the group at once
// (SIGTERM, then SIGKILL after 2 s), as real clients do. It prints what each step got and
// took. Exit 0: every request was answered (an error answer counts); 3: the handshake did not
// complete.
//
//   node bench/sdkclient/client.mjs [--kill] -- agent [args...]
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";

const argv = process.argv.slice(process.argv.indexOf("--") + 1);
if (process.argv.indexOf("--") < 0 || argv.length === 0) {
  console.error("usage: node client.mjs [--kill] -- agent [args...]");
  process.exit(2);
}
const grace = 2000;
const killAtOnce = process.argv.slice(2, process.argv.indexOf("--")).includes("--kill");
const child = spawn(argv[0], argv.slice(1), { stdio: ["pipe", "pipe", "ignore"], detached: true });
const exited = new Promise((resolve) => child.on("exit", resolve));
const spawned = new Promise((resolve, reject) => {
  child.on("spawn", resolve);
  child.on("error", reject);
});
const killGroup = (sig) => {
  try {
    process.kill(-child.pid, sig);
  } catch {}
};
const watchdog = setTimeout(() => {
  killGroup("SIGKILL");
  console.error("timeout");
  process.exit(3);
}, 60_000);

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms, "timeout").unref());
const steps = [];
const since = (t) => `${(performance.now() - t).toFixed(1)}ms`;
// call sends one request and records what it got and took; an error answer is an outcome.
const call = async (ctx, method, params) => {
  const start = performance.now();
  try {
    const result = await ctx.request(method, params);
    steps.push(`${method}: ok ${since(start)}`);
    return result;
  } catch (e) {
    if (!(e instanceof acp.RequestError)) throw e;
    steps.push(`${method}: error ${e.code} ${since(start)}`);
    return undefined;
  }
};

try {
  await spawned;
  const stream = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
  await acp.client({ name: "bench-sdk-client" }).connectWith(stream, async (ctx) => {
    const init = await call(ctx, acp.methods.agent.initialize, {
      protocolVersion: acp.PROTOCOL_VERSION,
      clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
      clientInfo: { name: "bench-sdk-client", version: "0" },
    });
    const session = await call(ctx, acp.methods.agent.session.new, { cwd: process.cwd(), mcpServers: [] });
    // As acpprobe's teardown does: session/close when the agent advertises it.
    if (session?.sessionId && init?.agentCapabilities?.sessionCapabilities?.close != null) {
      await call(ctx, acp.methods.agent.session.close, { sessionId: session.sessionId });
    }
  });
} catch (e) {
  console.error(String(e?.stack ?? e));
  killGroup("SIGKILL");
  process.exit(3);
}
const closed = performance.now();
child.stdin.destroy();
let by = "stdin";
let ladder = ["SIGTERM", "SIGKILL"];
if (killAtOnce) {
  killGroup("SIGTERM");
  by = "sigterm";
  ladder = ["SIGKILL"];
}
for (const sig of ladder) {
  if ((await Promise.race([exited.then(() => "exit"), sleep(grace)])) === "exit") break;
  killGroup(sig);
  by = sig.toLowerCase();
}
await exited;
clearTimeout(watchdog);
steps.push(`exit: ${by} ${since(closed)}`);
console.log(steps.join("; "));
