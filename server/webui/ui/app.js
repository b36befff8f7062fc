// The chat page: conversations kept in the browser, replies streamed from
// /v1/chat/completions and rendered as Markdown, the model's reasoning
// folded away, a Stop button, a model picker, sampling settings and an
// API key asked for when the server wants one.

import { APIError, listModels, streamChat } from "./api.js";
import { renderMarkdown } from "./markdown.js";
import * as store from "./store.js";

const $ = (id) => document.getElementById(id);
const ui = {
  list: $("conversations"),
  messages: $("messages"),
  empty: $("empty"),
  input: $("input"),
  send: $("send"),
  stop: $("stop"),
  model: $("model"),
  status: $("status"),
  error: $("error"),
  settings: $("settings"),
  keyDialog: $("key-dialog"),
};

let conversations = store.loadConversations();
let current = null; // the conversation shown, or null for a new one
let settings = store.loadSettings();
let running = null; // {controller, conv, msg} while a reply streams
const elements = new WeakMap(); // an assistant message's element

// ---- Errors and status

function showError(message) {
  ui.error.textContent = message;
  ui.error.hidden = !message;
}

function setStatus(text) {
  ui.status.textContent = text;
}

// ---- The API key

// askKey shows the key dialog with message and resolves to the key
// entered, or "" when the user cancels.
function askKey(message) {
  $("key-message").textContent = message;
  $("key-input").value = store.apiKey();
  ui.keyDialog.returnValue = "";
  ui.keyDialog.showModal();
  return new Promise((resolve) => {
    ui.keyDialog.addEventListener(
      "close",
      () => {
        const key = ui.keyDialog.returnValue === "save" ? $("key-input").value.trim() : "";
        if (key) store.setAPIKey(key);
        resolve(key);
      },
      { once: true },
    );
  });
}

// withKey runs fn with the saved key; when the server answers 401 it asks
// for a key and runs fn again with it.
async function withKey(fn) {
  for (;;) {
    try {
      return await fn(store.apiKey());
    } catch (e) {
      if (!(e instanceof APIError && e.status === 401)) throw e;
      const msg = store.apiKey() ? "The server refused the saved API key. Enter the right one." : "This server asks for an API key.";
      if (!(await askKey(msg))) throw e;
    }
  }
}

// ---- Models

async function loadModels() {
  try {
    const models = await withKey(listModels);
    // A model not loaded loads on its first request: the label says so.
    const label = ({ id, state }) => (state === "unloaded" ? `${id} (not loaded)` : state === "loading" ? `${id} (loading)` : id);
    ui.model.replaceChildren(...models.map((m) => new Option(label(m), m.id)));
    if (models.some((m) => m.id === settings.model)) ui.model.value = settings.model;
    setStatus("");
    showError("");
  } catch (e) {
    if (e instanceof APIError && e.status === 503) {
      setStatus("the model is loading…");
      setTimeout(loadModels, 1000);
      return;
    }
    showError(`Could not list the models: ${e.message}`);
  }
}

ui.model.addEventListener("change", () => {
  settings.model = ui.model.value;
  store.saveSettings(settings);
});

// ---- Conversations

function save() {
  try {
    store.saveConversations(conversations);
  } catch (e) {
    showError(e.message);
  }
}

function renderList() {
  document.title = current ? `${current.title} · inferno` : "inferno";
  ui.list.replaceChildren(
    ...conversations.map((c) => {
      const open = document.createElement("button");
      open.type = "button";
      open.className = "open";
      open.textContent = c.title || "New conversation";
      open.title = `${c.title} (double-click to rename)`;
      open.addEventListener("click", () => select(c));
      open.addEventListener("dblclick", () => rename(c));
      const del = document.createElement("button");
      del.type = "button";
      del.className = "delete";
      del.textContent = "×";
      del.title = "Delete";
      del.setAttribute("aria-label", `Delete “${c.title}”`);
      del.addEventListener("click", () => remove(c));
      const li = document.createElement("li");
      li.dataset.id = c.id;
      if (c === current) li.className = "active";
      li.append(open, del);
      return li;
    }),
  );
}

function select(conv) {
  current = conv;
  document.body.classList.remove("sidebar-open");
  renderList();
  renderMessages();
  ui.input.focus();
}

function remove(conv) {
  if (!confirm(`Delete “${conv.title}”?`)) return;
  if (running?.conv === conv) running.controller.abort();
  conversations = conversations.filter((c) => c !== conv);
  if (current === conv) current = null;
  save();
  renderList();
  renderMessages();
}

function rename(conv) {
  const title = prompt("Rename the conversation", conv.title)?.trim();
  if (!title) return;
  conv.title = title;
  save();
  renderList();
}

function startNew() {
  current = null;
  renderList();
  renderMessages();
  ui.input.focus();
}

// ---- Messages

function renderMessages() {
  const msgs = current?.messages ?? [];
  ui.messages.replaceChildren(...(msgs.length ? msgs.map((m, i) => messageElement(m, i === msgs.length - 1)) : [ui.empty]));
  scrollDown(true);
}

// messageElement returns a message's element; an assistant message's
// parts are filled by updateMessage.
function messageElement(msg, last) {
  const div = document.createElement("div");
  div.className = `msg ${msg.role}`;
  if (msg.role === "user") {
    const text = document.createElement("div");
    text.className = "text";
    text.textContent = msg.content;
    div.append(text);
    return div;
  }
  const reasoning = document.createElement("details");
  reasoning.className = "reasoning";
  const summary = document.createElement("summary");
  reasoning.append(summary, Object.assign(document.createElement("div"), { className: "body" }));
  const content = document.createElement("div");
  content.className = "content";
  const meta = document.createElement("div");
  meta.className = "meta";
  div.append(reasoning, content, meta);
  elements.set(msg, div);
  updateMessage(msg, last);
  return div;
}

// updateMessage renders an assistant message's reasoning, content and
// status line into its element.
function updateMessage(msg, last) {
  const div = elements.get(msg);
  const streaming = running?.msg === msg;
  const [reasoning, content, meta] = div.children;
  reasoning.hidden = !msg.reasoning;
  if (msg.reasoning) {
    const words = msg.reasoning.trim().split(/\s+/).length;
    reasoning.firstChild.textContent = `${streaming && !msg.content ? "Reasoning…" : "Reasoning"} (${words} ${words === 1 ? "word" : "words"})`;
    reasoning.lastChild.replaceChildren(renderMarkdown(msg.reasoning));
  }
  content.replaceChildren(renderMarkdown(msg.content));
  div.classList.toggle("streaming", streaming);
  const parts = [];
  if (msg.model) parts.push(msg.model);
  if (msg.usage) parts.push(`${msg.usage.completion_tokens} tokens`);
  // The rate between the first token and the last.
  if (msg.usage?.completion_tokens > 1 && msg.seconds > 0) parts.push(`${((msg.usage.completion_tokens - 1) / msg.seconds).toFixed(1)} tok/s`);
  if (msg.finish === "length") parts.push("cut at max tokens");
  if (msg.stopped) parts.push("stopped");
  const line = [document.createTextNode(parts.join(" · "))];
  if (msg.error) {
    const err = document.createElement("span");
    err.className = "msg-error";
    err.textContent = `Error: ${msg.error}`;
    line.push(err);
  }
  if (!streaming) {
    if (msg.content) line.push(button("Copy", "copy-reply", () => copy(msg.content, line[line.length - 1])));
    if (last) line.push(button("Regenerate", "regenerate", regenerate));
  }
  meta.replaceChildren(...line);
}

function button(text, cls, onclick) {
  const b = document.createElement("button");
  b.type = "button";
  b.className = cls;
  b.textContent = text;
  b.addEventListener("click", (e) => onclick(e.currentTarget));
  return b;
}

function scrollDown(force) {
  const m = ui.messages;
  if (force || m.scrollHeight - m.scrollTop - m.clientHeight < 80) m.scrollTop = m.scrollHeight;
}

// copy puts text on the clipboard and says so on the button.
async function copy(text, btn) {
  try {
    if (navigator.clipboard && window.isSecureContext) {
      await navigator.clipboard.writeText(text);
    } else {
      // Plain HTTP on another host: the clipboard API is not there.
      const area = Object.assign(document.createElement("textarea"), { value: text });
      document.body.append(area);
      area.select();
      document.execCommand("copy");
      area.remove();
    }
    flash(btn, "Copied");
  } catch {
    flash(btn, "Copy failed");
  }
}

function flash(btn, text) {
  if (!(btn instanceof HTMLButtonElement)) return;
  const was = btn.dataset.label ?? btn.textContent;
  btn.dataset.label = was;
  btn.textContent = text;
  setTimeout(() => (btn.textContent = was), 1200);
}

// Copy buttons of code blocks, which markdown.js renders without handlers.
ui.messages.addEventListener("click", (e) => {
  const btn = e.target.closest("button.copy");
  if (btn) copy(btn.closest(".codeblock").querySelector("code").textContent, btn);
});

// ---- Sending

// request returns the chat completion request of the conversation's
// messages with the settings.
function request(conv) {
  const messages = [];
  if (settings.system.trim()) messages.push({ role: "system", content: settings.system });
  for (const m of conv.messages) {
    if (m.role === "assistant" && (m.error || !m.content)) continue; // a failed or empty reply
    messages.push({ role: m.role, content: m.content });
  }
  const req = { model: ui.model.value || undefined, messages, stream_options: { include_usage: true } };
  const num = (v) => (v === "" || v === null || v === undefined ? undefined : Number(v));
  if (num(settings.temperature) !== undefined) req.temperature = num(settings.temperature);
  if (num(settings.topP) !== undefined) req.top_p = num(settings.topP);
  if (num(settings.maxTokens) !== undefined) req.max_tokens = num(settings.maxTokens);
  if (!settings.thinking) req.chat_template_kwargs = { enable_thinking: false };
  return req;
}

async function send(text) {
  if (running || !text.trim()) return;
  showError("");
  if (!current) {
    current = store.newConversation();
    current.title = store.titleOf(text);
    conversations.unshift(current);
  }
  current.messages.push({ role: "user", content: text });
  ui.input.value = "";
  autosize();
  await reply(current);
}

function regenerate() {
  if (running || !current) return;
  const msgs = current.messages;
  if (msgs[msgs.length - 1]?.role === "assistant") msgs.pop();
  if (!msgs.length) return;
  reply(current);
}

// reply streams the model's reply to the conversation's messages into a
// new assistant message.
async function reply(conv) {
  const req = request(conv);
  const msg = { role: "assistant", content: "", reasoning: "", model: ui.model.value };
  conv.messages.push(msg);
  conv.updated = Date.now();
  save();
  const controller = new AbortController();
  running = { controller, conv, msg };
  setRunning(true);
  renderList();
  renderMessages();
  let frame = 0;
  const paint = () => {
    frame = 0;
    if (conv === current && elements.has(msg)) {
      updateMessage(msg, true);
      scrollDown(false);
    }
  };
  const start = performance.now();
  let first = 0;
  try {
    await withKey(async (key) => {
      for await (const chunk of streamChat(req, { key, signal: controller.signal })) {
        const choice = chunk.choices?.[0];
        const d = choice?.delta ?? {};
        if (d.content || d.reasoning_content) {
          first ||= performance.now();
          msg.content += d.content ?? "";
          msg.reasoning += d.reasoning_content ?? "";
        }
        if (choice?.finish_reason) msg.finish = choice.finish_reason;
        if (chunk.usage) msg.usage = chunk.usage;
        frame ||= requestAnimationFrame(paint);
      }
    });
    msg.seconds = first ? (performance.now() - first) / 1000 : 0;
    setStatus(first ? `first token after ${((first - start) / 1000).toFixed(2)} s` : "");
  } catch (e) {
    if (e.name === "AbortError") {
      msg.stopped = true;
      setStatus("stopped");
    } else {
      msg.error = e.message;
      setStatus("");
      showError(e.message);
    }
  } finally {
    if (frame) cancelAnimationFrame(frame);
    running = null;
    conv.updated = Date.now();
    save();
    setRunning(false);
    renderList();
    if (conv === current) renderMessages();
  }
}

function setRunning(on) {
  ui.send.hidden = on;
  ui.stop.hidden = !on;
  document.body.classList.toggle("running", on);
  if (on) setStatus("generating…");
}

function stop() {
  running?.controller.abort();
}

// ---- Settings

function openSettings() {
  $("set-system").value = settings.system;
  $("set-temperature").value = settings.temperature;
  $("set-top-p").value = settings.topP;
  $("set-max-tokens").value = settings.maxTokens;
  $("set-thinking").checked = settings.thinking;
  $("set-api-key").value = store.apiKey();
  ui.settings.returnValue = "";
  ui.settings.showModal();
}

ui.settings.addEventListener("close", () => {
  if (ui.settings.returnValue !== "save") return;
  settings = {
    ...settings,
    system: $("set-system").value,
    temperature: $("set-temperature").value,
    topP: $("set-top-p").value,
    maxTokens: $("set-max-tokens").value,
    thinking: $("set-thinking").checked,
  };
  store.saveSettings(settings);
  const key = $("set-api-key").value.trim();
  if (key !== store.apiKey()) {
    store.setAPIKey(key);
    loadModels();
  }
});

// ---- Wiring

function autosize() {
  ui.input.style.height = "auto";
  ui.input.style.height = `${ui.input.scrollHeight}px`;
}

$("composer").addEventListener("submit", (e) => {
  e.preventDefault();
  send(ui.input.value);
});
ui.input.addEventListener("keydown", (e) => {
  if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
    e.preventDefault();
    send(ui.input.value);
  }
});
ui.input.addEventListener("input", autosize);
ui.stop.addEventListener("click", stop);
$("new-chat").addEventListener("click", startNew);
$("open-settings").addEventListener("click", openSettings);
for (const b of document.querySelectorAll("dialog button.cancel")) b.addEventListener("click", () => b.closest("dialog").close("cancel"));
$("toggle-sidebar").addEventListener("click", (e) => {
  e.stopPropagation();
  document.body.classList.toggle("sidebar-open");
});
// On a narrow screen the list slides over the page; a click on the page
// puts it away.
document.querySelector("main").addEventListener("click", () => document.body.classList.remove("sidebar-open"));
document.addEventListener("keydown", (e) => {
  if (e.key === "Escape" && running) stop();
  if (e.key.toLowerCase() === "o" && e.shiftKey && (e.ctrlKey || e.metaKey)) {
    e.preventDefault();
    startNew();
  }
});
// Another tab's changes.
window.addEventListener("storage", (e) => {
  if (e.key !== store.conversationsKey || running) return;
  const id = current?.id;
  conversations = store.loadConversations();
  current = conversations.find((c) => c.id === id) ?? null;
  renderList();
  renderMessages();
});

renderList();
renderMessages();
loadModels();
ui.input.focus();
