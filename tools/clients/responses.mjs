// OpenAI's Responses API (POST /v1/responses) through the clients that
// speak it: the official openai client (responses.create, streamed and
// not, and its stream helper, which checks the event sequence), a
// stored conversation (previous_response_id, inputItems.list, delete),
// a function tool and text.format; the Vercel AI SDK's default openai
// provider (generateText, streamText, tools, structured output); LangChain.js
// with useResponsesApi.
// The replies are nonsense, but every one must parse and validate. The
// model's reasoning is turned off (reasoning effort "none", or the
// template's enable_thinking): a random model that opens <think> would
// reason until its token limit.
import { createOpenAI } from "@ai-sdk/openai";
import { ChatOpenAI } from "@langchain/openai";
import { generateText, jsonSchema, Output, stepCountIs, streamText, tool } from "ai";
import OpenAI from "openai";
import { z } from "zod";
import { baseURL, check, done, model } from "./lib.mjs";

const client = new OpenAI({ baseURL, apiKey: "unused", maxRetries: 0 });
const noThink = { reasoning: { effort: "none" } };

// Bounded strings and numbers: a random model ends its reply soon.
const personSchema = {
  type: "object",
  properties: {
    name: { type: "string", maxLength: 8 },
    age: { type: "integer", minimum: 0, maximum: 120 },
    role: { enum: ["admin", "user", "guest"] },
  },
  required: ["name", "age", "role"],
  additionalProperties: false,
};
const Person = z.object({
  name: z.string().max(8),
  age: z.number().int().min(0).max(120),
  role: z.enum(["admin", "user", "guest"]),
});
const weatherParams = {
  type: "object",
  properties: { city: { type: "string", maxLength: 6 }, unit: { enum: ["c", "f"] } },
  required: ["city", "unit"],
  additionalProperties: false,
};
const Weather = z.object({ city: z.string().max(6), unit: z.enum(["c", "f"]) });

// expect throws unless ok, with what was got.
function expect(ok, what, got) {
  if (!ok) throw new Error(`${what}: ${JSON.stringify(got)}`);
}

await check("openai responses.create", async () => {
  const r = await client.responses.create({ model, input: "Say hi.", max_output_tokens: 16, ...noThink });
  expect(r.object === "response" && r.id.startsWith("resp_") && ["completed", "incomplete"].includes(r.status), "response", r);
  expect(typeof r.output_text === "string" && r.output.some((o) => o.type === "message"), "output", r.output);
  expect(r.usage.output_tokens > 0 && r.usage.total_tokens === r.usage.input_tokens + r.usage.output_tokens, "usage", r.usage);
  if (r.status === "incomplete") expect(r.incomplete_details?.reason === "max_output_tokens", "incomplete_details", r);
  return { status: r.status, text: r.output_text };
});

await check("openai responses.create streamed", async () => {
  const stream = await client.responses.create({ model, input: "Say hi.", max_output_tokens: 16, stream: true, ...noThink });
  let text = "", last = -1, final;
  for await (const ev of stream) {
    expect(ev.sequence_number === last + 1, "sequence_number", ev);
    last = ev.sequence_number;
    if (ev.type === "response.output_text.delta") text += ev.delta;
    if (ev.type === "response.completed" || ev.type === "response.incomplete") final = ev.response;
  }
  const msg = final.output.find((o) => o.type === "message");
  expect(msg.content[0].text === text, "streamed text", { text, final });
  return text;
});

await check("openai responses.stream helper", async () => {
  // The helper rebuilds the response from the events and checks their
  // order and identities as it goes.
  const stream = client.responses.stream({ model, input: "Say hi.", max_output_tokens: 16, ...noThink });
  let text = "";
  stream.on("response.output_text.delta", (ev) => { text += ev.delta; });
  const r = await stream.finalResponse();
  expect(r.output_text === text && r.usage.output_tokens > 0, "final response", { text, r });
  return { status: r.status, text };
});

await check("openai previous_response_id, inputItems.list, delete", async () => {
  const first = await client.responses.create({ model, input: "I am Ada.", max_output_tokens: 8, ...noThink });
  const r = await client.responses.create({ model, previous_response_id: first.id, max_output_tokens: 8, ...noThink,
    input: [{ role: "developer", content: "Be brief." }, { role: "user", content: "Who am I?" }] });
  // The follow-up's own input items, the newest first; the pager walks
  // them one a page through after.
  const page = await client.responses.inputItems.list(r.id);
  const roles = page.data.map((it) => `${it.type}:${it.role}`);
  expect(roles.join() === "message:user,message:developer" && page.data[0].content[0].text === "Who am I?" &&
    page.data.every((it) => it.id && it.status === "completed"), "input items", page.data);
  const walked = [];
  for await (const it of client.responses.inputItems.list(r.id, { order: "asc", limit: 1 })) walked.push(it.id);
  expect(walked.join() === page.data.map((it) => it.id).reverse().join(), "paged asc", walked);
  await client.responses.delete(r.id);
  const gone = await client.responses.retrieve(r.id).then(() => "found", (e) => e.status);
  const goneItems = await client.responses.inputItems.list(r.id).then(() => "found", (e) => e.status);
  const again = await client.responses.delete(r.id).then(() => "deleted", (e) => e.status);
  expect(gone === 404 && goneItems === 404 && again === 404, "deleted", { gone, goneItems, again });
  expect((await client.responses.retrieve(first.id)).id === first.id, "the first is kept", first.id);
  return roles;
});

const weatherTool = { type: "function", name: "get_weather", description: "the weather in a city", parameters: weatherParams, strict: true };

await check("openai function tool, tool_choice required, then its output", async () => {
  const r = await client.responses.create({ model, input: "Weather in Paris?", tools: [weatherTool], tool_choice: "required",
    parallel_tool_calls: false, max_output_tokens: 200, ...noThink });
  const calls = r.output.filter((o) => o.type === "function_call");
  expect(calls.length === 1 && calls[0].name === "get_weather" && calls[0].call_id && calls[0].status === "completed", "calls", r.output);
  const args = Weather.parse(JSON.parse(calls[0].arguments));
  // The call's output goes back with the call, statelessly.
  const r2 = await client.responses.create({ model, tools: [weatherTool], max_output_tokens: 16, store: false, ...noThink,
    input: [{ role: "user", content: "Weather in Paris?" }, calls[0], { type: "function_call_output", call_id: calls[0].call_id, output: "18 C, sunny" }] });
  expect(r2.status !== "failed" && r2.store === false, "follow-up", r2);
  const gone = await client.responses.retrieve(r2.id).then(() => "found", (e) => e.status);
  expect(gone === 404, "store: false is not kept", gone);
  return args;
});

await check("openai text.format json_schema", async () => {
  const r = await client.responses.create({ model, input: "Describe a person.", max_output_tokens: 200, ...noThink,
    text: { format: { type: "json_schema", name: "person", schema: personSchema, strict: true } } });
  expect(r.status === "completed", "status", r);
  return Person.parse(JSON.parse(r.output_text));
});

await check("openai responses.parse with zod", async () => {
  const { zodTextFormat } = await import("openai/helpers/zod");
  const r = await client.responses.parse({ model, input: "Describe a person.", max_output_tokens: 200, ...noThink,
    text: { format: zodTextFormat(Person, "person") } });
  return Person.parse(r.output_parsed);
});

await check("openai previous_response_id follow-up", async () => {
  const first = await client.responses.create({ model, input: "My name is Ada.", instructions: "Be brief.", max_output_tokens: 8, ...noThink });
  const second = await client.responses.create({ model, input: "What is my name?", previous_response_id: first.id, max_output_tokens: 8, ...noThink });
  expect(second.previous_response_id === first.id && second.usage.input_tokens > first.usage.input_tokens, "follow-up", { first: first.usage, second });
  const got = await client.responses.retrieve(second.id);
  expect(got.id === second.id && got.output_text === second.output_text, "retrieve", got);
  const err = await client.responses.create({ model, input: "x", previous_response_id: "resp_unknown" }).then(() => null, (e) => e);
  expect(err?.status === 400 && err.code === "previous_response_not_found" && err.param === "previous_response_id", "unknown id", err?.error);
  return { first: first.output_text, second: second.output_text };
});

// The Vercel AI SDK: its default provider speaks Responses.
const provider = createOpenAI({ baseURL, apiKey: "unused" });
const sdkNoThink = { openai: { forceReasoning: true, reasoningEffort: "none" } };

await check("ai-sdk generateText", async () => {
  const r = await generateText({ model: provider(model), prompt: "Say hi.", maxOutputTokens: 16, maxRetries: 0, providerOptions: sdkNoThink });
  expect(["stop", "length"].includes(r.finishReason) && r.usage.outputTokens > 0, "result", { finish: r.finishReason, usage: r.usage });
  return { finish: r.finishReason, text: r.text };
});

await check("ai-sdk streamText", async () => {
  const r = streamText({ model: provider(model), prompt: "Say hi.", maxOutputTokens: 16, maxRetries: 0, providerOptions: sdkNoThink,
    onError: ({ error }) => { throw error; } });
  let text = "";
  for await (const part of r.textStream) text += part;
  expect(text === (await r.text), "text", text);
  return { finish: await r.finishReason, text };
});

await check("ai-sdk tools, a second step with the result", async () => {
  let called = 0;
  const r = await generateText({
    model: provider(model), prompt: "Weather in Paris?", maxOutputTokens: 200, maxRetries: 0,
    tools: { get_weather: tool({ description: "the weather in a city", inputSchema: jsonSchema(weatherParams),
      execute: async (args) => { called++; Weather.parse(args); return "18 C, sunny"; } }) },
    toolChoice: "required", stopWhen: stepCountIs(2),
    providerOptions: { openai: { ...sdkNoThink.openai, parallelToolCalls: false } },
    prepareStep: ({ stepNumber }) => (stepNumber > 0 ? { toolChoice: "none", maxOutputTokens: 16 } : {}),
  });
  expect(called === 1 && r.steps.length === 2 && r.steps[0].toolCalls[0].toolName === "get_weather", "steps",
    r.steps.map((s) => ({ finish: s.finishReason, calls: s.toolCalls })));
  return { args: r.steps[0].toolCalls[0].input, text: r.text };
});

await check("ai-sdk conversation, earlier replies as item_reference", async () => {
  // A model the SDK does not take for a reasoning model: its earlier
  // replies go back as references to the stored items.
  const first = await generateText({ model: provider(model), prompt: "Say hi.", maxOutputTokens: 8, maxRetries: 0 });
  const r = await generateText({ model: provider(model), maxOutputTokens: 8, maxRetries: 0,
    messages: [{ role: "user", content: "Say hi." }, ...first.response.messages, { role: "user", content: "Again." }] });
  const input = r.request.body.input;
  expect(input.some((i) => i.type === "item_reference"), "input", input);
  return { first: first.text, second: r.text };
});

await check("ai-sdk structured output", async () => {
  const r = await generateText({ model: provider(model), prompt: "Describe a person.", maxOutputTokens: 200, maxRetries: 0,
    providerOptions: sdkNoThink, output: Output.object({ schema: Person }) });
  return Person.parse(r.output);
});

// LangChain.js with the Responses API.
const llm = new ChatOpenAI({
  model, apiKey: "unused", maxTokens: 200, maxRetries: 0, useResponsesApi: true,
  configuration: { baseURL }, modelKwargs: { chat_template_kwargs: { enable_thinking: false } },
});

await check("langchain useResponsesApi invoke", async () => {
  const msg = await new ChatOpenAI({ model, apiKey: "unused", maxTokens: 16, maxRetries: 0, useResponsesApi: true,
    configuration: { baseURL }, reasoning: { effort: "none" } }).invoke("Say hi.");
  expect(typeof msg.text === "string" && msg.response_metadata?.id?.startsWith("resp_"), "message", msg);
  return msg.text;
});

await check("langchain useResponsesApi withStructuredOutput", async () =>
  Person.parse(await llm.withStructuredOutput(Person, { name: "person", method: "jsonSchema" }).invoke("Describe a person.")));

await check("langchain useResponsesApi bindTools", async () => {
  const msg = await llm.bindTools([{ name: "get_weather", description: "the weather in a city", schema: Weather }],
    { tool_choice: "get_weather" }).invoke("Weather in Paris?");
  expect(msg.tool_calls?.length >= 1 && msg.tool_calls[0].name === "get_weather", "tool calls", msg.tool_calls);
  return Weather.parse(msg.tool_calls[0].args);
});

await check("langchain useResponsesApi stream", async () => {
  let text = "";
  for await (const chunk of await llm.stream("Say hi.")) text += chunk.text;
  expect(text.length > 0, "text", text);
  return text;
});

done();
