// The ollama npm client and the Vercel AI SDK's ollama-ai-provider-v2
// against inferno serve's /api/*: chat (streamed and not, with a format
// schema, with tools), generate (templated and raw), list, show, ps,
// version, and embed, which on the chat model the checks serve must fail
// cleanly. The replies are nonsense, but every one must arrive whole and
// parse. Reasoning is off (think: false): a random model that opens
// <think> would reason until num_predict.
import { generateText, jsonSchema, Output, streamText, tool } from "ai";
import { Ollama } from "ollama";
import { createOllama } from "ollama-ai-provider-v2";
import { z } from "zod";
import { check, done, model, origin } from "./lib.mjs";

const ollama = new Ollama({ host: origin });
const options = { num_predict: 12, temperature: 1, seed: 7 };
const hi = [{ role: "user", content: "Hi" }];

// Bounded strings and numbers, no other keys: a random model ends its
// reply soon.
const Person = z.object({
  name: z.string().max(8),
  age: z.number().int().min(0).max(120),
  role: z.enum(["admin", "user", "guest"]),
}).strict();
const personSchema = z.toJSONSchema(Person);
const weather = {
  type: "function",
  function: {
    name: "get_weather",
    description: "the weather in a city",
    parameters: {
      type: "object",
      properties: { city: { type: "string", maxLength: 6 }, unit: { type: "string", enum: ["c", "f"] } },
      required: ["city", "unit"],
      additionalProperties: false,
    },
  },
};

// isDone checks a reply's last object: its reason and its counts and
// durations, in nanoseconds.
function isDone(r) {
  if (r.done !== true || !["stop", "length"].includes(r.done_reason)) throw new Error(`end ${JSON.stringify(r)}`);
  for (const k of ["total_duration", "prompt_eval_count", "prompt_eval_duration", "eval_count", "eval_duration"]) {
    if (!Number.isInteger(r[k]) || r[k] < 0) throw new Error(`${k} ${r[k]}`);
  }
  if (r.total_duration < r.eval_duration || r.prompt_eval_count < 1) throw new Error(`metrics ${JSON.stringify(r)}`);
}

await check("ollama chat", async () => {
  const r = await ollama.chat({ model, messages: hi, think: false, options });
  isDone(r);
  if (r.message.role !== "assistant" || typeof r.message.content !== "string") throw new Error(JSON.stringify(r.message));
  return { content: r.message.content, eval_count: r.eval_count, done_reason: r.done_reason };
});
await check("ollama chat streamed = not streamed", async () => {
  let text = "";
  let last;
  for await (const part of await ollama.chat({ model, messages: hi, think: false, options, stream: true })) {
    if (!part.done && typeof part.message.content !== "string") throw new Error(JSON.stringify(part));
    text += part.message.content;
    last = part;
  }
  isDone(last);
  const whole = await ollama.chat({ model, messages: hi, think: false, options });
  if (text !== whole.message.content) throw new Error(`streamed ${JSON.stringify(text)}, whole ${JSON.stringify(whole.message.content)}`);
  return text;
});
for (let i = 0; i < 3; i++) {
  await check(`ollama chat format schema #${i}`, async () => {
    const r = await ollama.chat({ model, messages: [{ role: "user", content: "Describe a person." }], think: false,
      format: personSchema, options: { temperature: 1, seed: i, num_predict: 200 } });
    return Person.parse(JSON.parse(r.message.content));
  });
}
await check("ollama chat format json, streamed", async () => {
  let text = "";
  for await (const part of await ollama.chat({ model, messages: hi, think: false, format: "json", stream: true,
    options: { temperature: 0, num_predict: 300 } })) {
    text += part.message.content;
    if (part.done && part.done_reason !== "stop") return `cut at num_predict: ${part.done_reason}`;
  }
  return JSON.parse(text);
});
await check("ollama chat with tools, and the tool's result back", async () => {
  // A random model calls a tool only by chance: the reply must be a
  // well-formed message either way, its calls' arguments objects.
  const r = await ollama.chat({ model, messages: [{ role: "user", content: "Weather in Paris?" }], think: false, tools: [weather], options });
  isDone(r);
  for (const c of r.message.tool_calls ?? []) {
    if (typeof c.function.name !== "string" || typeof c.function.arguments !== "object") throw new Error(JSON.stringify(c));
  }
  const calls = [{ function: { name: "get_weather", arguments: { city: "Paris", unit: "c" } } }];
  const next = await ollama.chat({ model, think: false, tools: [weather], options, messages: [
    { role: "user", content: "Weather in Paris?" },
    { role: "assistant", content: "", tool_calls: calls },
    { role: "tool", content: "18 degrees", tool_name: "get_weather" },
  ] });
  isDone(next);
  return { first: r.message.tool_calls ?? r.message.content, then: next.message.content };
});
await check("ollama chat with a forced tool call (tool_choice, as ollama-ai-provider-v2 sends it)", async () => {
  const r = await ollama.chat({ model, messages: [{ role: "user", content: "Weather in Paris?" }], think: false, tools: [weather],
    tool_choice: "required", options: { ...options, num_predict: 200 } });
  isDone(r);
  const calls = r.message.tool_calls ?? [];
  if (calls.length < 1 || calls.some((c) => c.function.name !== "get_weather" || typeof c.function.arguments !== "object")) {
    throw new Error(JSON.stringify(r.message));
  }
  return calls.map((c) => c.function);
});
await check("ollama chat think: true gives thinking apart", async () => {
  const r = await ollama.chat({ model, messages: hi, think: true, options: { ...options, num_predict: 6 } });
  isDone(r);
  if (r.message.content.includes("<think>")) throw new Error(`content ${JSON.stringify(r.message.content)}`);
  return { thinking: r.message.thinking ?? "", content: r.message.content };
});
await check("ollama generate", async () => {
  const r = await ollama.generate({ model, prompt: "Once upon a time", think: false, options });
  isDone(r);
  if (typeof r.response !== "string") throw new Error(JSON.stringify(r));
  return r.response;
});
await check("ollama generate raw, streamed", async () => {
  let text = "";
  let n = 0;
  for await (const part of await ollama.generate({ model, prompt: "Once upon a time", raw: true, options, stream: true })) {
    text += part.response;
    if (part.done) {
      isDone(part);
      n = part.eval_count;
    }
  }
  if (n !== options.num_predict) throw new Error(`eval_count ${n}`);
  return text;
});
await check("ollama list", async () => {
  const r = await ollama.list();
  const m = r.models.find((m) => m.name === `${model}:latest`);
  if (!m || m.details.format !== "gguf" || !m.details.family || !m.details.quantization_level || !(m.size > 0) || !m.digest) {
    throw new Error(JSON.stringify(r));
  }
  return m.details;
});
await check("ollama show", async () => {
  const r = await ollama.show({ model });
  const arch = r.model_info["general.architecture"];
  if (!arch || !(r.model_info[`${arch}.context_length`] > 0) || !r.capabilities.includes("completion") || !r.template) {
    throw new Error(JSON.stringify({ ...r, template: r.template?.length }));
  }
  return { capabilities: r.capabilities, arch, context: r.model_info[`${arch}.context_length`] };
});
await check("ollama ps", async () => {
  const r = await ollama.ps();
  const m = r.models.find((m) => m.name === `${model}:latest`);
  if (!m || !(m.size > 0) || typeof m.size_vram !== "number" || Number.isNaN(new Date(m.expires_at).getTime())) {
    throw new Error(JSON.stringify(r));
  }
  return { size: m.size, expires_at: m.expires_at };
});
await check("ollama version", async () => {
  const r = await ollama.version();
  if (!/^\d+\.\d+\.\d+$/.test(r.version)) throw new Error(JSON.stringify(r));
  return r.version;
});
await check("ollama embed on a chat model fails cleanly", async () => {
  try {
    await ollama.embed({ model, input: "Hi" });
  } catch (e) {
    if (e.name !== "ResponseError" || e.status_code !== 400 || !e.error.includes("does not support embeddings")) throw e;
    return e.error;
  }
  throw new Error("embed on a chat model succeeded");
});
await check("ollama unknown model is a 404", async () => {
  try {
    await ollama.chat({ model: "no-such-model", messages: hi });
  } catch (e) {
    if (e.status_code !== 404 || e.error !== "model 'no-such-model' not found") throw e;
    return e.error;
  }
  throw new Error("an unknown model answered");
});

const provider = createOllama({ baseURL: `${origin}/api` });
const providerOptions = { ollama: { think: false, options } };
await check("ai-sdk ollama generateText", async () => {
  const r = await generateText({ model: provider(model), prompt: "Hi", providerOptions });
  if (typeof r.text !== "string" || !(r.usage.outputTokens > 0)) throw new Error(JSON.stringify(r.usage));
  return { text: r.text, finishReason: r.finishReason, usage: r.usage.outputTokens };
});
await check("ai-sdk ollama streamText", async () => {
  const r = streamText({ model: provider(model), prompt: "Hi", providerOptions, onError: ({ error }) => { throw error; } });
  let text = "";
  for await (const t of r.textStream) text += t;
  if (text !== (await r.text)) throw new Error("text differs");
  return { text, finishReason: await r.finishReason };
});
await check("ai-sdk ollama generateText with a schema", async () => {
  const r = await generateText({ model: provider(model), prompt: "Describe a person.", output: Output.object({ schema: Person }),
    providerOptions: { ollama: { think: false, options: { temperature: 1, seed: 3, num_predict: 200 } } } });
  return Person.parse(r.output);
});
await check("ai-sdk ollama generateText with a required tool", async () => {
  const r = await generateText({ model: provider(model), prompt: "Weather in Paris?", toolChoice: "required",
    providerOptions: { ollama: { think: false, options: { ...options, num_predict: 200 } } },
    tools: { get_weather: tool({ description: "the weather in a city", inputSchema: jsonSchema(weather.function.parameters) }) } });
  if (r.finishReason !== "tool-calls" || r.toolCalls.length < 1 || r.toolCalls.some((c) => c.toolName !== "get_weather")) {
    throw new Error(JSON.stringify({ finishReason: r.finishReason, toolCalls: r.toolCalls }));
  }
  return r.toolCalls.map((c) => c.input);
});
done();
