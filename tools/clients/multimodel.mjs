// Several models in one server, through the official openai client: a
// server of its own (INFERNO_BIN, which run.sh sets) serves the tiny chat
// model, a synthetic embedding model and the chat model again under a
// third name, two loaded at most. The chat and embedding models, used
// together, give the replies they give alone (the chat model's alone: the
// server run.sh started); the third model unloads the least recently used;
// an unknown model is a 404 whose message lists the names. Through the
// ollama client: /api/tags lists every model, loaded or not, requests
// pick theirs by name (":latest" or not), /api/ps the loaded ones, and
// keep_alive 0 unloads one.
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Ollama } from "ollama";
import OpenAI from "openai";
import { baseURL, check, done, model } from "./lib.mjs";

const bin = process.env.INFERNO_BIN;
if (!bin) {
  throw new Error("INFERNO_BIN: the inferno binary (run.sh sets it)");
}
const tiny = fileURLToPath(new URL("../../testdata/golden/tiny-q8_0.gguf", import.meta.url));
const tmp = mkdtempSync(join(tmpdir(), "inferno-multimodel-"));
const emb = join(tmp, "embed.gguf");
execFileSync(bin, ["synth", emb, "--preset", "tiny", "--embedding", "--vocab-size", "320"], { stdio: "ignore" });

const port = 20000 + Math.floor(Math.random() * 20000);
const server = spawn(bin, ["serve", tiny, `embed=${emb}`, `third=${tiny}`, "--addr", `127.0.0.1:${port}`,
  "--threads", "2", "--max-models", "2", "--keep-alive", "-1"], { stdio: ["ignore", "ignore", "pipe"] });
let log = "";
server.stderr.on("data", (d) => { log += d; });
const stop = () => { server.kill(); rmSync(tmp, { recursive: true, force: true }); };

const origin = `http://127.0.0.1:${port}`;
for (let i = 0; ; i++) {
  try {
    if ((await fetch(`${origin}/health`)).ok) break;
  } catch {}
  if (i === 100) {
    stop();
    throw new Error(`serve not ready:\n${log}`);
  }
  await new Promise((r) => setTimeout(r, 100));
}

const alone = new OpenAI({ baseURL, apiKey: "unused", maxRetries: 0 });
const multi = new OpenAI({ baseURL: `${origin}/v1`, apiKey: "unused", maxRetries: 0 });
const ask = { messages: [{ role: "user", content: "Name a color." }], max_tokens: 12, temperature: 0 };
const texts = ["The capital of France is Paris.", "x"];
const states = async () => {
  const out = {};
  for await (const m of multi.models.list()) out[m.id] = m.status?.value;
  return out;
};
const same = (a, b, what) => {
  if (JSON.stringify(a) !== JSON.stringify(b)) throw new Error(`${what}: ${JSON.stringify(a)} != ${JSON.stringify(b)}`);
};

await check("models.list before any request", async () => {
  const s = await states();
  same(s, { "tiny-q8_0": "unloaded", embed: "unloaded", third: "unloaded" }, "states");
  return s;
});

const want = (await alone.chat.completions.create({ model, ...ask })).choices[0].message.content;
let firstEmbedding;
await check("chat and embeddings together, loaded on first use", async () => {
  const [chat, e] = await Promise.all([
    multi.chat.completions.create({ model: "tiny-q8_0", ...ask }),
    multi.embeddings.create({ model: "embed", input: texts }),
  ]);
  same(chat.choices[0].message.content, want, "the chat model's reply beside the embedding model");
  if (e.data.length !== 2 || e.data[0].embedding.length !== 64) throw new Error(`embeddings ${JSON.stringify(e.data.map((d) => d.embedding.length))}`);
  firstEmbedding = e.data.map((d) => d.embedding);
  return { content: chat.choices[0].message.content, dims: e.data[0].embedding.length };
});

await check("concurrent requests to both models", async () => {
  const calls = [];
  for (let i = 0; i < 4; i++) {
    calls.push(multi.chat.completions.create({ model: "tiny-q8_0", ...ask }).then((c) => same(c.choices[0].message.content, want, "chat")));
    calls.push(multi.embeddings.create({ model: "embed", input: texts }).then((e) => same(e.data.map((d) => d.embedding), firstEmbedding, "embeddings")));
  }
  await Promise.all(calls);
  return await states();
});

await check("a third model unloads the least recently used", async () => {
  await multi.embeddings.create({ model: "embed", input: "x" }); // the chat model is now the least recently used
  const c = await multi.chat.completions.create({ model: "third", ...ask });
  same(c.choices[0].message.content, want, "the third name's reply");
  for (let i = 0; i < 50; i++) {
    const s = await states();
    if (s["tiny-q8_0"] === "unloaded") {
      same(s, { "tiny-q8_0": "unloaded", embed: "loaded", third: "loaded" }, "states");
      return s;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`states ${JSON.stringify(await states())}`);
});

await check("an unknown model is a 404 listing the models", async () => {
  try {
    await multi.chat.completions.create({ model: "nope", ...ask });
  } catch (e) {
    if (e.status === 404 && e.code === "model_not_found" && e.message.includes('"tiny-q8_0", "embed", "third"')) return e.message;
    throw e;
  }
  throw new Error("no error");
});

await check("ollama: every model listed, each picked by name, keep_alive 0 unloads", async () => {
  const ol = new Ollama({ host: origin });
  const tags = (await ol.list()).models;
  same(tags.map((m) => m.name), ["tiny-q8_0:latest", "embed:latest", "third:latest"], "/api/tags");
  for (const m of tags) {
    if (!(m.size > 0) || m.digest.length !== 64 || m.details.family !== "qwen3") throw new Error(`/api/tags entry ${JSON.stringify(m)}`);
  }
  const chat = await ol.chat({ model: "tiny-q8_0:latest", messages: ask.messages, options: { num_predict: 4 } });
  if (chat.model !== "tiny-q8_0:latest" || !chat.done) throw new Error(`chat ${JSON.stringify(chat)}`);
  const e = await ol.embed({ model: "embed", input: texts });
  if (e.embeddings.length !== 2 || e.embeddings[0].length !== 64) throw new Error(`embed ${JSON.stringify(e).slice(0, 200)}`);
  const loaded = () => ol.ps().then((r) => r.models.map((m) => m.name).sort());
  same(await loaded(), ["embed:latest", "tiny-q8_0:latest"], "/api/ps");
  const un = await ol.generate({ model: "embed:latest", prompt: "", keep_alive: 0 });
  if (un.done_reason !== "unload") throw new Error(`unload ${JSON.stringify(un)}`);
  for (let i = 0; i < 50 && (await loaded()).length !== 1; i++) await new Promise((r) => setTimeout(r, 100));
  same(await loaded(), ["tiny-q8_0:latest"], "/api/ps after the unload");
  same((await states()).embed, "unloaded", "embed's state");
  try {
    await ol.chat({ model: "nope", messages: ask.messages });
  } catch (err) {
    if (err.status_code === 404 && err.error === "model 'nope' not found") return { tags: tags.length, ps: await loaded() };
    throw err;
  }
  throw new Error("no error for an unknown model");
});

stop();
done();
