// LangChain.js and the official openai client against inferno serve:
// withStructuredOutput in its JSON-schema and function-calling methods,
// and a tool bound with a named tool_choice; the openai client's chat
// completions of n choices, streamed and not, and completions of several
// prompts.
// The replies are nonsense, but every one must parse and validate. The
// model's reasoning is turned off: a random model that opens <think> would
// reason until maxTokens.
import { ChatOpenAI } from "@langchain/openai";
import OpenAI from "openai";
import { z } from "zod";
import { baseURL, check, done, model } from "./lib.mjs";

const llm = new ChatOpenAI({
  model, apiKey: "unused", temperature: 1, maxTokens: 400, maxRetries: 0,
  configuration: { baseURL },
  modelKwargs: { chat_template_kwargs: { enable_thinking: false } },
});

// Bounded strings and numbers: a random model ends its reply soon.
const Person = z.object({
  name: z.string().max(8).describe("the person's name"),
  age: z.number().int().min(0).max(120),
  role: z.enum(["admin", "user", "guest"]),
});
const weather = {
  name: "get_weather",
  description: "the weather in a city",
  schema: z.object({ city: z.string().max(6), unit: z.enum(["c", "f"]) }),
};

for (let i = 0; i < 3; i++) {
  for (const method of ["jsonSchema", "functionCalling", undefined]) {
    await check(`withStructuredOutput ${method ?? "default"} #${i}`, async () =>
      Person.parse(await llm.withStructuredOutput(Person, method && { method, name: "person" }).invoke("Describe a person.")));
  }
  await check(`bindTools tool_choice named #${i}`, async () => {
    const msg = await llm.bindTools([weather], { tool_choice: "get_weather", parallel_tool_calls: false }).invoke("Weather in Paris?");
    if (msg.tool_calls?.length !== 1 || msg.tool_calls[0].name !== "get_weather") {
      throw new Error(`tool calls ${JSON.stringify(msg.tool_calls)}`);
    }
    return weather.schema.parse(msg.tool_calls[0].args);
  });
}

// A string with a format and a length bound: zod writes format "email",
// its own email pattern and maxLength 40.
const Contact = z.object({ email: z.string().email().max(40) });
await check("withStructuredOutput email max 40", async () =>
  Contact.parse(await llm.withStructuredOutput(Contact, { method: "jsonSchema", name: "contact" }).invoke("An email address?")));

const client = new OpenAI({ baseURL, apiKey: "unused", maxRetries: 0 });
const ask = {
  model, messages: [{ role: "user", content: "Hi" }], max_tokens: 12, temperature: 1, seed: 5,
  chat_template_kwargs: { enable_thinking: false },
};
await check("openai chat n: 2", async () => {
  const r = await client.chat.completions.create({ ...ask, n: 2 });
  const one = await client.chat.completions.create({ ...ask, seed: 6 });
  if (r.choices.length !== 2 || r.choices.some((c, i) => c.index !== i || typeof c.message.content !== "string")) {
    throw new Error(`choices ${JSON.stringify(r.choices)}`);
  }
  if (r.choices[1].message.content !== one.choices[0].message.content) {
    throw new Error(`choice 1 ${JSON.stringify(r.choices[1].message.content)}, seed 6 alone ${JSON.stringify(one.choices[0].message.content)}`);
  }
  return r.choices.map((c) => c.message.content);
});
await check("openai chat n: 2 streamed", async () => {
  const texts = ["", ""];
  for await (const chunk of await client.chat.completions.create({ ...ask, n: 2, stream: true })) {
    for (const c of chunk.choices) texts[c.index] += c.delta?.content ?? "";
  }
  const r = await client.chat.completions.create({ ...ask, n: 2 });
  if (texts[0] !== r.choices[0].message.content || texts[1] !== r.choices[1].message.content) {
    throw new Error(`streamed ${JSON.stringify(texts)}, not ${JSON.stringify(r.choices.map((c) => c.message.content))}`);
  }
  return texts;
});
await check("openai completions of two prompts, echo", async () => {
  const r = await client.completions.create({ model, prompt: ["In the", "And"], n: 2, echo: true, max_tokens: 8, seed: 3 });
  if (r.choices.length !== 4 || r.choices.some((c, k) => c.index !== k || !c.text.startsWith(k < 2 ? "In the" : "And"))) {
    throw new Error(`choices ${JSON.stringify(r.choices)}`);
  }
  return r.choices.map((c) => c.text);
});
done();
