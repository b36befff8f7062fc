// The page's state in the browser's localStorage: the conversations, the
// settings and the API key. Nothing leaves the browser but the requests
// the page makes to its own server.

// conversationsKey is the conversations' key in localStorage.
export const conversationsKey = "inferno.conversations";
const settingsKey = "inferno.settings";
const apiKeyKey = "inferno.apiKey";

// titleLength is the most characters of a conversation's first message
// its title shows.
const titleLength = 60;

function read(key, fallback) {
  try {
    const v = JSON.parse(localStorage.getItem(key));
    return v ?? fallback;
  } catch {
    return fallback;
  }
}

function write(key, value) {
  try {
    localStorage.setItem(key, JSON.stringify(value));
  } catch (e) {
    throw new Error(`could not save in the browser's storage (${e.name}): delete some conversations`);
  }
}

// loadConversations returns the saved conversations, the latest first:
// {id, title, created, updated, messages: [{role, content, reasoning,
// model, stopped, error, usage, seconds}]}.
export function loadConversations() {
  const list = read(conversationsKey, []);
  if (!Array.isArray(list)) return [];
  return list
    .filter((c) => c && typeof c.id === "string" && Array.isArray(c.messages))
    .sort((a, b) => (b.updated ?? 0) - (a.updated ?? 0));
}

// saveConversations saves the conversations, the latest first.
export function saveConversations(list) {
  list.sort((a, b) => (b.updated ?? 0) - (a.updated ?? 0));
  write(conversationsKey, list);
}

// newConversation returns an empty conversation.
export function newConversation() {
  const now = Date.now();
  const id = globalThis.crypto?.randomUUID?.() ?? `${now}-${Math.random().toString(36).slice(2)}`;
  return { id, title: "", created: now, updated: now, messages: [] };
}

// titleOf returns the title a conversation gets from its first message.
export function titleOf(text) {
  const s = text.replace(/\s+/g, " ").trim();
  return s.length > titleLength ? s.slice(0, titleLength - 1).trimEnd() + "…" : s || "New conversation";
}

// defaultSettings are the settings of a first visit: every sampling
// parameter left to the server.
export const defaultSettings = { model: "", system: "", temperature: "", topP: "", maxTokens: "", thinking: true };

// loadSettings returns the saved settings.
export function loadSettings() {
  const s = read(settingsKey, {});
  return { ...defaultSettings, ...(s && typeof s === "object" ? s : {}) };
}

// saveSettings saves the settings.
export function saveSettings(s) {
  write(settingsKey, s);
}

// apiKey returns the saved API key ("" for none).
export function apiKey() {
  return localStorage.getItem(apiKeyKey) ?? "";
}

// setAPIKey saves the API key, or forgets it when key is empty.
export function setAPIKey(key) {
  if (key) localStorage.setItem(apiKeyKey, key);
  else localStorage.removeItem(apiKeyKey);
}
