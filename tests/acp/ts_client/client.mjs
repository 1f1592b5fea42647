// A second, independently written ACP client: the official TypeScript SDK's client side
// driving `gosling acp` through a session. The SDK checks every message it receives
// against ACP's schema, so anything gosling sends off-spec fails here.
//
//   node client.mjs CWD COMMAND [ARGS...]
//
// Prints one JSON object with what it saw; exits non-zero on any protocol failure.
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";

const [cwd, command, ...args] = process.argv.slice(2);
const child = spawn(command, args, { stdio: ["pipe", "pipe", "inherit"] });
const exited = new Promise((resolve) => child.on("exit", (code) => resolve(code)));
const stream = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));

const updates = [];
const asked = [];
const app = acp
  .client({ name: "gosling-ts-test" })
  .onRequest("session/request_permission", async ({ params }) => {
    asked.push({
      title: params.toolCall.title,
      options: params.options.map((o) => o.kind),
    });
    return { outcome: { outcome: "selected", optionId: "allow_once" } };
  })
  .onNotification("session/update", async ({ params }) => {
    updates.push(params.update);
  });

const result = await app.connectWith(stream, async (agent) => {
  const init = await agent.request("initialize", {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: { fs: { readTextFile: false, writeTextFile: false } },
    clientInfo: { name: "gosling-ts-test", version: "0.0.0" },
  });
  const session = await agent.request("session/new", { cwd, mcpServers: [] });
  const sessionId = session.sessionId;
  const turn = await agent.request("session/prompt", {
    sessionId,
    prompt: [{ type: "text", text: "change the greeting" }],
  });
  await agent.request("session/set_mode", { sessionId, modeId: "auto" });
  const options = await agent.request("session/set_config_option", {
    sessionId,
    configId: "mode",
    value: "smart_approve",
  });
  const listed = await agent.request("session/list", { cwd });
  let unknownSession = null;
  try {
    await agent.request("session/prompt", {
      sessionId: "no-such-session",
      prompt: [{ type: "text", text: "hi" }],
    });
  } catch (error) {
    unknownSession = error.code;
  }
  await agent.request("session/close", { sessionId });
  return { init, session, turn, options, listed, unknownSession };
});

child.stdin.end();
const code = await exited;
process.stdout.write(JSON.stringify({ ...result, updates, asked, exitCode: code }) + "\n");
