// The official Anthropic client (@anthropic-ai/sdk) against inferno serve's
// Messages API: messages.create, messages.stream (its text events and
// final message), a tool forced by tool_choice whose input validates, the
// tool_result round trip, structured output (zodOutputFormat),
// countTokens, thinking blocks given back, and the errors' classes.
// The replies are nonsense. The model's reasoning is turned off: a random
// model that opens <think> would reason until max_tokens (the Go tests
// check thinking blocks on a scripted reply).
import Anthropic from "@anthropic-ai/sdk";
import { zodOutputFormat } from "@anthropic-ai/sdk/helpers/zod";
import { z } from "zod";
import { check, done, model, origin } from "./lib.mjs";

const client = new Anthropic({ baseURL: origin, apiKey: "unused", maxRetries: 0 });
const ask = {
  model, max_tokens: 16, temperature: 0, thinking: { type: "disabled" },
  system: "Answer briefly.", messages: [{ role: "user", content: "Hi" }],
};
const weather = {
  name: "get_weather",
  description: "the weather in a city",
  input_schema: {
    type: "object",
    properties: { city: { type: "string", maxLength: 6 }, unit: { type: "string", enum: ["c", "f"] } },
    required: ["city", "unit"],
    additionalProperties: false,
  },
};
const Weather = z.object({ city: z.string().max(6), unit: z.enum(["c", "f"]) }).strict();

// text returns a message's text blocks joined.
const text = (msg) => msg.content.filter((b) => b.type === "text").map((b) => b.text).join("");

await check("messages.create", async () => {
  const msg = await client.messages.create(ask);
  if (msg.type !== "message" || msg.role !== "assistant" || !msg.id.startsWith("msg_") || msg.model !== model) {
    throw new Error(`message ${JSON.stringify(msg)}`);
  }
  if (!["end_turn", "max_tokens"].includes(msg.stop_reason) || msg.content.some((b) => b.type !== "text")) {
    throw new Error(`stop_reason ${msg.stop_reason}, content ${JSON.stringify(msg.content)}`);
  }
  if (!(msg.usage.input_tokens + msg.usage.cache_read_input_tokens > 5 && msg.usage.output_tokens > 0)) {
    throw new Error(`usage ${JSON.stringify(msg.usage)}`);
  }
  return { text: text(msg), usage: msg.usage };
});

await check("messages.stream: text events and finalMessage", async () => {
  let streamed = "";
  const stream = client.messages.stream(ask).on("text", (delta) => { streamed += delta; });
  const msg = await stream.finalMessage();
  const whole = await client.messages.create(ask); // greedy: the same reply
  if (streamed !== text(msg) || text(msg) !== text(whole) || msg.stop_reason !== whole.stop_reason) {
    throw new Error(`streamed ${JSON.stringify(streamed)}, final ${JSON.stringify(msg)}, whole ${JSON.stringify(whole)}`);
  }
  if (msg.usage.output_tokens !== whole.usage.output_tokens) {
    throw new Error(`usage ${JSON.stringify(msg.usage)} streamed, ${JSON.stringify(whole.usage)} whole`);
  }
  return streamed;
});

for (const stream of [false, true]) {
  await check(`tool_choice {type: "tool"}${stream ? " streamed" : ""}, tool_result round trip`, async () => {
    const req = {
      ...ask, temperature: 1, max_tokens: 200, tools: [weather],
      tool_choice: { type: "tool", name: "get_weather", disable_parallel_tool_use: true },
      messages: [{ role: "user", content: "Weather in Paris?" }],
    };
    const msg = stream ? await client.messages.stream(req).finalMessage() : await client.messages.create(req);
    const uses = msg.content.filter((b) => b.type === "tool_use");
    if (msg.stop_reason !== "tool_use" || uses.length !== 1 || uses[0].name !== "get_weather" || !uses[0].id.startsWith("toolu_")) {
      throw new Error(`reply ${JSON.stringify(msg)}`);
    }
    const input = Weather.parse(uses[0].input);
    const next = await client.messages.create({
      ...ask, tools: [weather],
      messages: [
        ...req.messages,
        { role: "assistant", content: msg.content },
        { role: "user", content: [{ type: "tool_result", tool_use_id: uses[0].id, content: "12 degrees, rain" }] },
      ],
    });
    if (next.type !== "message" || !next.stop_reason) {
      throw new Error(`after the tool result ${JSON.stringify(next)}`);
    }
    return { input, reply: next.content };
  });
}

// The SDK moves string and number bounds into descriptions, which a
// random model ignores: the schema holds only bounded values.
const Role = z.object({ role: z.enum(["admin", "user", "guest"]), active: z.boolean() });
for (const stream of [false, true]) {
  await check(`output_config.format (zodOutputFormat)${stream ? " streamed" : ""}`, async () => {
    const req = { ...ask, temperature: 1, max_tokens: 100, output_config: { format: zodOutputFormat(Role) } };
    const msg = stream ? await client.messages.stream(req).finalMessage() : await client.messages.parse(req);
    return Role.parse(msg.parsed_output);
  });
}

await check("countTokens", async () => {
  const { input_tokens } = await client.messages.countTokens({
    model, system: ask.system, messages: ask.messages, thinking: ask.thinking, tools: [weather],
  });
  const msg = await client.messages.create({ ...ask, max_tokens: 1, tools: [weather] });
  const read = msg.usage.input_tokens + msg.usage.cache_read_input_tokens;
  if (!(input_tokens > 5) || input_tokens !== read) {
    throw new Error(`countTokens ${input_tokens}, messages.create read ${read}`);
  }
  return input_tokens;
});

await check("thinking blocks given back", async () => {
  const msg = await client.messages.create({
    ...ask,
    messages: [
      { role: "user", content: "Hi" },
      {
        role: "assistant", content: [
          { type: "thinking", thinking: "A greeting.", signature: "c2lnbmF0dXJl" },
          { type: "redacted_thinking", data: "b3BhcXVl" },
          { type: "text", text: "Hello." },
        ],
      },
      { role: "user", content: [{ type: "text", text: "Bye" }] },
    ],
  });
  if (msg.type !== "message" || !msg.stop_reason) {
    throw new Error(`reply ${JSON.stringify(msg)}`);
  }
  return msg.content;
});

await check("errors: the SDK's classes", async () => {
  const got = [];
  for (const [req, cls] of [
    [{ ...ask, model: "claude-opus-5" }, Anthropic.NotFoundError],
    [{ ...ask, max_tokens: 0 }, Anthropic.BadRequestError],
    [{ ...ask, messages: [{ role: "user", content: [{ type: "image", source: { type: "url", url: "http://x" } }] }] }, Anthropic.BadRequestError],
  ]) {
    try {
      await client.messages.create(req);
      throw new Error(`${JSON.stringify(req)} accepted`);
    } catch (e) {
      if (!(e instanceof cls) || e.error?.type !== "error" || !e.error?.error?.message) {
        throw e;
      }
      got.push(`${e.status} ${e.error.error.type}`);
    }
  }
  return got;
});
done();
