// A browser on the live page (`--dashboard`), as ops would open it, for a check by hand or a
// lab script: opens URL in headless Chromium over the DevTools protocol, waits WAIT_MS, then
// prints one JSON line with what the page holds (its snapshots: count, the first's seq and
// time, the last in full; the tiles' text; the charts drawn) and any console error.
// `--dump-dom` cannot do this while the run goes on: the page's event stream never lets
// Chromium's virtual time settle.
//   node --experimental-websocket scripts/watch-page.mjs http://127.0.0.1:PORT/ [WAIT_MS] [DEVTOOLS_PORT]
// Node 20 needs --experimental-websocket (22 and later have WebSocket built in).
import { spawn } from "node:child_process";
import { tmpdir } from "node:os";
import { rmSync } from "node:fs";
const [url, waitMs = "4000", port = "9333"] = process.argv.slice(2);
if (!url || !/^https?:\/\//.test(url) || !(Number(waitMs) >= 0)) {
  console.error("usage: node --experimental-websocket scripts/watch-page.mjs http://127.0.0.1:PORT/ [WAIT_MS] [DEVTOOLS_PORT]");
  process.exit(2);
}
if (typeof WebSocket !== "function") {
  console.error("watch-page.mjs: this Node has no WebSocket; run it with --experimental-websocket (Node 20-21) or Node 22+");
  process.exit(2);
}
const profile = `${tmpdir()}/ingestbench-watch-${port}`;
const chrome = spawn("chromium", ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
  // This machine's network is closed: Chromium's own background connections only fail.
  "--disable-background-networking", "--disable-component-update", "--disable-sync",
  `--remote-debugging-port=${port}`, `--user-data-dir=${profile}`, "about:blank"], { stdio: "ignore" });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
// Chromium gone and its profile removed, then exit.
const quit = async (code) => {
  if (chrome.exitCode === null && chrome.signalCode === null) { chrome.kill(); await new Promise((r) => chrome.on("exit", r)); }
  // Chromium's helper processes can still write into the profile for a moment after the
  // browser exits (ENOTEMPTY): retried, and a profile left behind in the temp dir is said,
  // not a failed check.
  try { rmSync(profile, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 }); }
  catch (e) { console.error(`watch-page.mjs: left ${profile} behind: ${e.code || e}`); }
  process.exit(code);
};
let targets;
for (let i = 0; i < 50; i++) {
  try { targets = await (await fetch(`http://127.0.0.1:${port}/json`)).json(); if (targets.some((t) => t.type === "page")) break; } catch {}
  await sleep(200);
}
const page = (targets || []).find((t) => t.type === "page");
if (!page) {
  console.error(`watch-page.mjs: Chromium's DevTools did not answer on port ${port} (is chromium installed?)`);
  await quit(2);
}
const ws = new WebSocket(page.webSocketDebuggerUrl);
await new Promise((r) => ws.addEventListener("open", r));
let id = 0; const pending = new Map(); const errors = [];
ws.addEventListener("message", (m) => {
  const msg = JSON.parse(m.data);
  if (msg.id && pending.has(msg.id)) { pending.get(msg.id)(msg.result); pending.delete(msg.id); }
  if (msg.method === "Runtime.exceptionThrown") errors.push(msg.params.exceptionDetails.text);
  if (msg.method === "Runtime.consoleAPICalled" && msg.params.type === "error") errors.push(JSON.stringify(msg.params.args));
  if (msg.method === "Log.entryAdded" && msg.params.entry.level === "error") errors.push(msg.params.entry.text);
});
const call = (method, params = {}) => new Promise((r) => { const i = ++id; pending.set(i, r); ws.send(JSON.stringify({ id: i, method, params })); });
await call("Runtime.enable"); await call("Log.enable");
await call("Page.navigate", { url });
await sleep(Number(waitMs));
const r = await call("Runtime.evaluate", { returnByValue: true, expression: `JSON.stringify({
  snaps: snaps.length, first_seq: snaps[0] && snaps[0].seq, first_t: snaps[0] && snaps[0].t_s,
  last: snaps[snaps.length - 1],
  tiles: Object.fromEntries(["state","eta","etarange","rate","rates","docs","progress","mbps","lat","stage"].map((k) => [k, document.getElementById(k).textContent])),
  polylines: document.querySelectorAll("polyline").length,
  sweep_hidden: document.getElementById("sweep").hidden, last_hidden: document.getElementById("last").hidden })` });
console.log(JSON.stringify({ page: JSON.parse(r.result.value), errors }));
ws.close();
await quit(0);
