// The server's API as the page uses it: the model list and streamed chat
// completions (Server-Sent Events read from fetch's body stream).

// APIError is an error answer of the server: its HTTP status, the error's
// code and message.
export class APIError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

function headers(key) {
  const h = { "Content-Type": "application/json" };
  if (key) h.Authorization = `Bearer ${key}`;
  return h;
}

// failure returns the APIError of a response that is not 2xx.
async function failure(resp) {
  let code = "";
  let message = `${resp.status} ${resp.statusText}`;
  try {
    const body = await resp.json();
    if (body?.error?.message) message = body.error.message;
    code = body?.error?.code ?? "";
  } catch {
    // not the server's JSON error (a proxy's page): the status says it
  }
  return new APIError(resp.status, code, message);
}

// listModels returns the server's models: {id, state}, state being
// "loaded", "loading" or "unloaded" where the server serves several
// models (its entries' status), else "".
export async function listModels(key) {
  const resp = await fetch("/v1/models", { headers: headers(key) });
  if (!resp.ok) throw await failure(resp);
  const body = await resp.json();
  return (body.data ?? []).map((m) => ({ id: m.id, state: m.status?.value ?? "" }));
}

// streamChat posts a chat completion request with stream set and yields
// each chunk the server sends, until [DONE]. An error event ends it with
// an APIError; signal aborts it (an AbortError).
export async function* streamChat(request, { key, signal }) {
  const resp = await fetch("/v1/chat/completions", {
    method: "POST",
    headers: headers(key),
    body: JSON.stringify({ ...request, stream: true }),
    signal,
  });
  if (!resp.ok) throw await failure(resp);
  const reader = resp.body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = "";
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buf += value;
      let end;
      while ((end = buf.search(/\r?\n\r?\n/)) !== -1) {
        const event = buf.slice(0, end);
        buf = buf.slice(end).replace(/^\r?\n\r?\n/, "");
        const data = event
          .split(/\r?\n/)
          .filter((l) => l.startsWith("data:"))
          .map((l) => l.slice(5).replace(/^ /, ""))
          .join("\n");
        if (data === "") continue;
        if (data === "[DONE]") return;
        const chunk = JSON.parse(data);
        if (chunk.error) throw new APIError(0, chunk.error.code ?? "", chunk.error.message ?? "the generation failed");
        yield chunk;
      }
    }
  } finally {
    reader.cancel().catch(() => {}); // closes the connection when the caller stops early
  }
  throw new APIError(0, "", "the stream ended before [DONE]: the server closed the connection");
}
