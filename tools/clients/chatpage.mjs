// The chat page at "/" in headless Chromium (Debian's chromium, driven by
// puppeteer-core): it lists the model, streams a reply, stops it (and the
// server stops generating), finds the conversation again after a reload,
// renders Markdown without running any of it, and asks for an API key when
// the server answers 401. The page must load with no error and no Content
// Security Policy violation. Its Markdown parser is checked in node first.
//
// The screenshot goes to $SCREENSHOT (relative to the repository's root;
// docs/chat-page.png is the one the documentation shows), else to a
// file in the temporary directory:
//
//	SCREENSHOT=docs/chat-page.png tools/clients/run.sh chatpage.mjs
import { existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import puppeteer from "puppeteer-core";
import { parse, safeURL } from "../../server/webui/ui/markdown.js";
import { check, done, model, origin } from "./lib.mjs";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const screenshot = resolve(root, process.env.SCREENSHOT ?? join(tmpdir(), "inferno-chat-page.png"));
const question = "Who made the heaven and the earth?";
// The model the page is to pick: the tiny model run.sh serves, or another
// (the screenshot in docs/ is of assets/kjv-q8_0.gguf's replies).
const want = process.env.INFERNO_MODEL ?? model;

const assert = (ok, what) => {
  if (!ok) throw new Error(what);
};
const json = (v) => JSON.stringify(v);

await check("markdown: text stays text, unsafe links are dropped", async () => {
  const doc = parse("<script>alert(1)</script> [x](javascript:alert(1)) [y](https://a.example/p_(q)) <img src=x onerror=alert(1)>");
  const p = doc[0].c;
  assert(p[0].t === "text" && p[0].v === "<script>alert(1)</script> ", `script: ${json(p[0])}`);
  assert(p[1].t === "span", `javascript: link: ${json(p[1])}`);
  assert(p[3].t === "a" && p[3].href === "https://a.example/p_(q)", `link: ${json(p[3])}`);
  assert(p[4].t === "text" && p[4].v.includes("<img"), `img: ${json(p[4])}`);
  for (const bad of ["data:text/html,x", "vbscript:x", "/relative", "JaVaScRiPt:x"]) assert(safeURL(bad) === "", `safeURL(${bad})`);
  return "ok";
});
await check("markdown: blocks", async () => {
  const doc = parse("# T\n\n- a **b**\n  - c\n1. d\n\n```go\nx := `<b>`\n```\n> q\n\n| h | i |\n|---|--:|\n| 1 | 2 |\n\n```\nopen");
  const kinds = doc.map((b) => b.t).join(",");
  assert(kinds === "h,ul,ol,code,quote,table,code", kinds);
  assert(doc[1].items[0][1].t === "ul" && doc[3].lang === "go" && doc[3].text === "x := `<b>`", json(doc));
  assert(doc[5].align[1] === "right" && doc[6].text === "open", json(doc.slice(5)));
  const inl = parse("a *b* __c__ ~~d~~ `e` snake_case_word 2 * 3 * 4")[0].c.map((n) => n.t).join(",");
  assert(inl === "text,em,text,strong,text,del,text,code,text", inl);
  return "ok";
});

await check("markdown: random and pathological input", async () => {
  // Seeded random strings of Markdown's characters: parse never throws.
  const alphabet = ["*", "_", "~", "`", "[", "]", "(", ")", "<", ">", "#", "-", "+", "1.", "|", ":", "\\", "\n", "\n\n", " ",
    "a", "http://x.y/", "```", "> ", "- ", "    ", "\t", "é", "😀"];
  let seed = 7;
  const rand = (n) => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff), seed % n);
  for (let i = 0; i < 20000; i++) {
    let s = "";
    for (let k = rand(60); k > 0; k--) s += alphabet[rand(alphabet.length)];
    try {
      parse(s);
    } catch (e) {
      throw new Error(`parse(${json(s)}): ${e.message}`);
    }
  }
  // Runs of one construct, 20,000 characters: nesting is bounded and the
  // time linear (a reply re-renders on every frame while it streams).
  const times = {};
  for (const unit of ["> ", "- ", "*", "**a", "_a ", "[", "[a](", "<http://", "`", "~~", "h ", "| a ", "\n- a", "\n    - "]) {
    const t = performance.now();
    parse(unit.repeat(Math.ceil(20000 / unit.length)));
    times[unit] = Math.round(performance.now() - t);
  }
  const slow = Object.entries(times).filter(([, ms]) => ms > 500);
  assert(slow.length === 0, `slow: ${json(slow)}`);
  return times;
});

const executablePath = process.env.CHROMIUM ?? ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"].find(existsSync);
if (!executablePath) {
  await check("chromium", async () => {
    throw new Error("no Chromium: install Debian's chromium, or set CHROMIUM to its path");
  });
  done();
}
const browser = await puppeteer.launch({
  executablePath,
  headless: true,
  // Root (a CI container) cannot use Chromium's sandbox.
  args: [...(process.getuid?.() === 0 ? ["--no-sandbox"] : []), "--disable-gpu", "--disable-dev-shm-usage"],
  defaultViewport: { width: 1100, height: 720 },
});

// open returns a page of a fresh context (its own localStorage) that
// records console errors, page errors and failed requests.
async function open() {
  const context = await browser.createBrowserContext();
  await context.overridePermissions(origin, ["clipboard-read", "clipboard-write", "clipboard-sanitized-write"]);
  const page = await context.newPage();
  page.problems = [];
  page.on("console", (m) => m.type() === "error" && page.problems.push(`console: ${m.text()}`));
  page.on("pageerror", (e) => page.problems.push(`page error: ${e.message}`));
  page.setDefaultTimeout(15000);
  return page;
}

const text = (page, sel) => page.$eval(sel, (e) => e.textContent);
const generated = async () => {
  const m = /^inferno_generation_tokens_total (\S+)$/m.exec(await (await fetch(`${origin}/metrics`)).text());
  return Number(m?.[1] ?? NaN);
};

const page = await open();
await check("page: loads, lists the model", async () => {
  const resp = await page.goto(`${origin}/`, { waitUntil: "domcontentloaded" });
  assert(resp.status() === 200 && resp.headers()["content-security-policy"]?.startsWith("default-src 'self'"), `${resp.status()} ${json(resp.headers())}`);
  await page.waitForFunction((m) => [...document.querySelectorAll("#model option")].some((o) => o.value === m), {}, want);
  await page.select("#model", want);
  return await page.$eval("#model", (s) => s.value);
});

let stopped = "";
await check("page: settings, streaming, stop", async () => {
  await page.click("#open-settings");
  await page.type("#set-system", "You are a poet.");
  await page.type("#set-temperature", "1");
  await page.type("#set-max-tokens", "100000"); // until Stop: the context is the limit
  await page.click("#settings-save");
  await page.type("#input", question);
  await page.keyboard.press("Enter");
  await page.waitForSelector(".msg.assistant.streaming");
  // The reply grows over several paints while it streams.
  const lengths = [];
  const len = () => page.$eval(".msg.assistant .content", (e) => e.textContent.length);
  for (let i = 0; i < 100 && new Set(lengths.filter((n) => n > 0)).size < 4; i++) {
    lengths.push(await len());
    await new Promise((r) => setTimeout(r, 50));
  }
  assert(new Set(lengths.filter((n) => n > 0)).size >= 4, `the reply did not grow while streaming: ${lengths}`);
  assert(await page.$eval("#send", (b) => b.hidden) && !(await page.$eval("#stop", (b) => b.hidden)), "Stop is not offered while streaming");
  await page.click("#stop");
  await page.waitForSelector(".msg.assistant:not(.streaming)");
  await page.waitForFunction(() => !document.querySelector("#send").hidden);
  const meta = await text(page, ".msg.assistant .meta");
  assert(meta.includes("stopped") && meta.includes(want), `meta line ${json(meta)}`);
  stopped = await text(page, ".msg.assistant .content");
  // The server stops generating: its token count stands still.
  await new Promise((r) => setTimeout(r, 300));
  const before = await generated();
  await new Promise((r) => setTimeout(r, 700));
  const after = await generated();
  assert(before === after, `the server went on generating after Stop: ${before} then ${after} tokens`);
  assert((await text(page, ".msg.assistant .content")) === stopped, "the reply changed after Stop");
  return { characters: stopped.length, tokensGenerated: after };
});

await check("page: the conversation is there after a reload", async () => {
  await page.reload({ waitUntil: "domcontentloaded" });
  await page.waitForSelector("#conversations li .open");
  const titles = await page.$$eval("#conversations li .open", (bs) => bs.map((b) => b.textContent));
  assert(titles.length === 1 && titles[0] === question, `titles ${json(titles)}`);
  await page.click("#conversations li .open");
  await page.waitForSelector(".msg.assistant .content");
  const user = await text(page, ".msg.user .text");
  const reply = await text(page, ".msg.assistant .content");
  assert(user === question && reply === stopped, `after reload: ${json(user)} / ${json(reply.slice(0, 80))}`);
  const settings = await page.evaluate(() => JSON.parse(localStorage.getItem("inferno.settings")));
  assert(settings.maxTokens === "100000" && settings.system === "You are a poet." && settings.temperature === "1", json(settings));
  return titles;
});

await check("page: screenshot", async () => {
  await page.mouse.move(0, 0);
  await page.$eval("#messages", (m) => (m.scrollTop = 0)); // the question in view
  await page.screenshot({ path: screenshot });
  return screenshot;
});

await check("page: rename, new chat, delete", async () => {
  page.on("dialog", (d) => d.accept(d.type() === "prompt" ? "Fire haiku" : undefined));
  await page.click("#conversations li .open", { count: 2 });
  await page.waitForFunction(() => document.querySelector("#conversations li .open").textContent === "Fire haiku");
  assert((await page.title()) === "Fire haiku · inferno", `title ${await page.title()}`);
  await page.click("#new-chat");
  await page.waitForSelector("#messages #empty");
  await page.click("#conversations li .delete");
  await page.waitForFunction(() => document.querySelectorAll("#conversations li").length === 0);
  const saved = await page.evaluate(() => localStorage.getItem("inferno.conversations"));
  assert(saved === "[]", `saved ${saved}`);
  return "ok";
});

await check("page: Markdown renders as elements, never as HTML", async () => {
  const md = await open();
  const reply = "Some **bold**, *italic* and `code`:\n\n```js\nconsole.log(\"<b>hi</b>\");\n```\n\n- one\n- [two](javascript:alert(1))\n\n<img src=x onerror=\"window.pwned=1\"><script>window.pwned=2</script>";
  await md.goto(`${origin}/`, { waitUntil: "domcontentloaded" });
  await md.evaluate((reply) => {
    const now = Date.now();
    localStorage.setItem("inferno.conversations", JSON.stringify([{ id: "md", title: "markdown", created: now, updated: now,
      messages: [{ role: "user", content: "<b>not bold</b>" }, { role: "assistant", content: reply, reasoning: "I *think*.", model: "x" }] }]));
  }, reply);
  await md.reload({ waitUntil: "domcontentloaded" });
  await md.click("#conversations li .open");
  await md.waitForSelector(".msg.assistant .codeblock");
  const dom = await md.evaluate(() => {
    const c = document.querySelector(".msg.assistant .content");
    return {
      tags: [...c.querySelectorAll("*")].map((e) => e.tagName.toLowerCase()).join(","),
      code: c.querySelector(".codeblock code").textContent,
      lang: c.querySelector(".codeblock .lang").textContent,
      links: c.querySelectorAll("a").length,
      user: document.querySelector(".msg.user .text").innerText,
      reasoningOpen: document.querySelector(".msg.assistant details.reasoning").open,
      reasoning: document.querySelector(".msg.assistant details.reasoning .body").textContent,
      summary: document.querySelector(".msg.assistant details.reasoning summary").textContent,
      pwned: window.pwned ?? null,
    };
  });
  assert(!/\b(img|script|b)\b/.test(dom.tags) && dom.tags.includes("strong") && dom.tags.includes("em") && dom.tags.includes("ul"), dom.tags);
  assert(dom.code === 'console.log("<b>hi</b>");' && dom.lang === "js" && dom.links === 0 && dom.user === "<b>not bold</b>", json(dom));
  assert(dom.reasoningOpen === false && dom.reasoning === "I think." && dom.summary === "Reasoning (2 words)" && dom.pwned === null, json(dom));
  await md.click(".codeblock button.copy");
  await md.waitForFunction(() => document.querySelector(".codeblock button.copy").textContent !== "Copy");
  const copied = await md.evaluate(() => navigator.clipboard.readText());
  assert(copied === dom.code, `clipboard ${json(copied)}`);
  assert(md.problems.length === 0, md.problems.join("; "));
  await md.browserContext().close();
  return dom.tags;
});

await check("page: asks for the API key on 401 and sends it; errors; a reply to its end", async () => {
  const kp = await open();
  // The server here has no key: a 401 is made up for the first model list.
  await kp.setRequestInterception(true);
  const auth = [];
  kp.on("request", (req) => {
    if (!req.url().endsWith("/v1/models")) return req.continue();
    auth.push(req.headers().authorization ?? "");
    if (auth.length === 1) {
      return req.respond({ status: 401, contentType: "application/json",
        body: json({ error: { message: "missing or wrong API key", type: "invalid_request_error", param: null, code: "invalid_api_key" } }) });
    }
    return req.continue();
  });
  await kp.goto(`${origin}/`, { waitUntil: "domcontentloaded" });
  await kp.waitForSelector("#key-dialog[open]");
  await kp.type("#key-input", "sk-test");
  await kp.keyboard.press("Enter");
  await kp.waitForFunction((m) => document.querySelector("#model").value === m, {}, want);
  const stored = await kp.evaluate(() => localStorage.getItem("inferno.apiKey"));
  assert(auth.length === 2 && auth[0] === "" && auth[1] === "Bearer sk-test" && stored === "sk-test", json({ auth, stored }));
  // An error answer shows: a temperature the server refuses.
  await kp.evaluate(() => localStorage.setItem("inferno.settings", JSON.stringify({ temperature: "9" })));
  await kp.reload({ waitUntil: "domcontentloaded" });
  await kp.waitForFunction((m) => document.querySelector("#model").value === m, {}, want);
  await kp.type("#input", "Hi");
  await kp.keyboard.press("Enter");
  await kp.waitForSelector("#error:not([hidden])");
  const shown = [await text(kp, "#error"), await text(kp, ".msg.assistant .msg-error")];
  assert(shown.every((s) => s.includes("temperature")), `errors shown: ${json(shown)}`);
  // A reply that runs to max tokens says so, with its token count.
  await kp.evaluate(() => localStorage.setItem("inferno.settings", JSON.stringify({ maxTokens: "8" })));
  await kp.reload({ waitUntil: "domcontentloaded" });
  await kp.waitForFunction((m) => document.querySelector("#model").value === m, {}, want);
  await kp.type("#input", "Hi again");
  await kp.keyboard.press("Enter");
  await kp.waitForFunction(() => document.querySelector(".msg.assistant .meta")?.textContent.includes("tok/s"));
  const meta = await text(kp, ".msg.assistant .meta");
  assert(meta.includes("8 tokens") && meta.includes("cut at max tokens") && !meta.includes("stopped"), `meta ${json(meta)}`);
  // 401s and the 400 the page itself caused are expected console errors;
  // nothing else.
  const other = kp.problems.filter((p) => !/\b(401|400)\b/.test(p));
  assert(other.length === 0, other.join("; "));
  await kp.browserContext().close();
  return auth;
});

await check("page: no errors, no policy violations", async () => {
  assert(page.problems.length === 0, page.problems.join("; "));
  return "none";
});

await browser.close();
done();
