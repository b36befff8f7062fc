// LangChain.js against inferno serve (run.sh starts one on the repository's
// random-weight tiny model): withStructuredOutput in its JSON-schema and
// function-calling methods, and a tool bound with a named tool_choice.
// The replies are nonsense, but every one must parse and validate. The
// model's reasoning is turned off: a random model that opens <think> would
// reason until maxTokens.
import { ChatOpenAI } from "@langchain/openai";
import { z } from "zod";

const baseURL = process.env.INFERNO_URL ?? "http://127.0.0.1:8080/v1";
const llm = new ChatOpenAI({
  model: "tiny-q8_0", apiKey: "unused", temperature: 1, maxTokens: 400, maxRetries: 0,
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

let failures = 0;
async function check(what, fn) {
  try {
    console.log(`ok   ${what}: ${JSON.stringify(await fn())}`);
  } catch (e) {
    failures++;
    console.log(`FAIL ${what}: ${e?.message ?? e}`);
  }
}

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
process.exit(failures ? 1 : 0);
