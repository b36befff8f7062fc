// A small Markdown renderer for model replies: paragraphs, headings,
// fenced code blocks, block quotes, lists (nested by indentation), tables,
// rules; inline code, bold, italic, strikethrough, links and bare URLs.
//
// parse turns text into a tree of plain objects; render turns the tree
// into DOM nodes with createElement and textContent only, so no text of
// the reply is ever read as HTML: "<script>" in a reply is shown as the
// characters it is. Links keep only http:, https: and mailto: targets.
// A reply still streaming parses as well as a finished one (an unclosed
// code fence runs to the end).
//
// The tree's nodes: {t: "p"|"h"|"quote"|"ul"|"ol"|"code"|"hr"|"table"}
// for blocks, {t: "text"|"code"|"strong"|"em"|"del"|"a"|"br"} inline.

const fenceRe = /^ {0,3}(`{3,}|~{3,})\s*([^\s`]*)[^`]*$/;
const headingRe = /^ {0,3}(#{1,6})(?:\s+(.*?))?(?:\s+#+)?\s*$/;
const ruleRe = /^ {0,3}([-*_])(?:\s*\1){2,}\s*$/;
const quoteRe = /^ {0,3}>\s?(.*)$/;
const itemRe = /^( *)([-*+]|\d{1,9}[.)])(\s+|$)(.*)$/;
const tableSepRe = /^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$/;

// maxDepth bounds the nesting of quotes, lists, emphasis and links: text
// nested deeper is shown as it is, so that no reply (a line of ten
// thousand "> ") runs the parser out of stack.
const maxDepth = 16;

// parse returns the blocks of the Markdown text md.
export function parse(md) {
  return blocks(String(md ?? "").replace(/\r\n?/g, "\n").replace(/\t/g, "    ").split("\n"), 0);
}

// blocks parses lines, nested depth deep, into a list of block nodes.
function blocks(lines, depth) {
  if (depth >= maxDepth) return [{ t: "p", c: [{ t: "text", v: lines.join("\n") }] }];
  const out = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    if (line.trim() === "") {
      i++;
      continue;
    }
    let m;
    if ((m = fenceRe.exec(line))) {
      const fence = m[1];
      const indent = line.length - line.trimStart().length;
      const body = [];
      i++;
      while (i < lines.length && !isClosingFence(lines[i], fence)) {
        body.push(stripIndent(lines[i], indent));
        i++;
      }
      i++; // the closing fence, if any
      out.push({ t: "code", lang: m[2], text: body.join("\n") });
    } else if ((m = headingRe.exec(line))) {
      out.push({ t: "h", level: m[1].length, c: inline(m[2] ?? "", depth) });
      i++;
    } else if (ruleRe.test(line)) {
      out.push({ t: "hr" });
      i++;
    } else if (quoteRe.test(line)) {
      const body = [];
      while (i < lines.length && lines[i].trim() !== "") {
        const q = quoteRe.exec(lines[i]);
        body.push(q ? q[1] : lines[i]);
        i++;
      }
      out.push({ t: "quote", c: blocks(body, depth + 1) });
    } else if ((m = itemRe.exec(line)) && (m[4] !== "" || m[3] !== "")) {
      i = list(lines, i, out, depth);
    } else if (line.includes("|") && i + 1 < lines.length && tableSepRe.test(lines[i + 1]) && lines[i + 1].includes("-")) {
      i = table(lines, i, out, depth);
    } else {
      const para = [];
      while (i < lines.length && lines[i].trim() !== "" && (para.length === 0 || !interrupts(lines[i]))) {
        para.push(lines[i].trim());
        i++;
      }
      out.push({ t: "p", c: inline(para.join("\n"), depth) });
    }
  }
  return out;
}

// interrupts reports whether line starts a block that ends a paragraph.
function interrupts(line) {
  const m = itemRe.exec(line);
  return fenceRe.test(line) || headingRe.test(line) || ruleRe.test(line) || quoteRe.test(line) ||
    (m !== null && m[4] !== "" && (!/^\d/.test(m[2]) || m[2].startsWith("1")));
}

function isClosingFence(line, fence) {
  const s = line.trim();
  return s.length >= fence.length && s[0] === fence[0] && /^(`+|~+)$/.test(s) && line.length - line.trimStart().length < 4;
}

function stripIndent(line, n) {
  let k = 0;
  while (k < n && line[k] === " ") k++;
  return line.slice(k);
}

// list parses the list that starts at lines[i] into out and returns the
// index of the first line after it.
function list(lines, i, out, depth) {
  const first = itemRe.exec(lines[i]);
  const indent = first[1].length;
  const ordered = /^\d/.test(first[2]);
  const node = { t: ordered ? "ol" : "ul", start: ordered ? parseInt(first[2], 10) : 1, items: [] };
  while (i < lines.length) {
    const m = itemRe.exec(lines[i]);
    if (!m || m[1].length !== indent || /^\d/.test(m[2]) !== ordered) break;
    // The item's content column: lines indented to it (or past the marker)
    // belong to the item, as do lines that continue its paragraph.
    const col = indent + m[2].length + Math.min(Math.max(m[3].length, 1), 4);
    const body = [m[4]];
    i++;
    while (i < lines.length) {
      const line = lines[i];
      const lead = line.length - line.trimStart().length;
      if (line.trim() === "") {
        // A blank line: the item goes on only if an indented line follows.
        let j = i;
        while (j < lines.length && lines[j].trim() === "") j++;
        if (j < lines.length && lines[j].length - lines[j].trimStart().length > indent) {
          for (; i < j; i++) body.push("");
          continue;
        }
        break;
      }
      if (lead > indent) {
        body.push(stripIndent(line, Math.min(lead, col)));
      } else if (!itemRe.test(line) && !interrupts(line) && body[body.length - 1] !== "") {
        body.push(line.trim()); // a lazy continuation of the item's paragraph
      } else {
        break;
      }
      i++;
    }
    node.items.push(blocks(body, depth + 1));
    while (i < lines.length && lines[i].trim() === "") {
      const next = lines.slice(i).find((l) => l.trim() !== "");
      const n = next && itemRe.exec(next);
      if (!n || n[1].length !== indent) break;
      i++;
    }
  }
  out.push(node);
  return i;
}

// table parses the table that starts at lines[i] (its header, then the
// separator row) into out and returns the index after it.
function table(lines, i, out, depth) {
  const cells = (line) => {
    let s = line.trim();
    if (s.startsWith("|")) s = s.slice(1);
    if (s.endsWith("|") && !s.endsWith("\\|")) s = s.slice(0, -1);
    return s.split(/(?<!\\)\|/).map((c) => c.trim().replace(/\\\|/g, "|"));
  };
  const head = cells(lines[i]);
  const align = cells(lines[i + 1]).map((c) => (c.endsWith(":") ? (c.startsWith(":") ? "center" : "right") : c.startsWith(":") ? "left" : ""));
  const rows = [];
  i += 2;
  while (i < lines.length && lines[i].trim() !== "" && lines[i].includes("|")) {
    rows.push(cells(lines[i]));
    i++;
  }
  out.push({
    t: "table",
    align: head.map((_, k) => align[k] ?? ""),
    head: head.map((c) => inline(c, depth)),
    rows: rows.map((r) => head.map((_, k) => inline(r[k] ?? "", depth))),
  });
  return i;
}

// autolinkRe and urlRe match at their lastIndex (sticky): <URL> and a
// bare URL.
const autolinkRe = /<((?:https?:\/\/|mailto:)[^\s<>]+)>/iy;
const urlRe = /https?:\/\/[^\s<>]+/iy;

const punct = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~";

// inline parses a paragraph's text, nested depth deep, into inline nodes.
export function inline(s, depth = 0) {
  const out = [];
  const nested = depth < maxDepth;
  const unclosed = {}; // by delimiter: where its closer is not, or is next
  let text = "";
  const flush = () => {
    if (text) out.push({ t: "text", v: text });
    text = "";
  };
  let i = 0;
  while (i < s.length) {
    const ch = s[i];
    if (ch === "\\" && i + 1 < s.length && punct.includes(s[i + 1])) {
      text += s[i + 1];
      i += 2;
      continue;
    }
    if (ch === "\n") {
      flush();
      out.push({ t: "br" });
      i++;
      continue;
    }
    if (ch === "`") {
      let n = 1;
      while (s[i + n] === "`") n++;
      const ticks = "`".repeat(n);
      let j = s.indexOf(ticks, i + n);
      while (j !== -1 && s[j + n] === "`") {
        let k = j;
        while (s[k] === "`") k++;
        j = s.indexOf(ticks, k);
      }
      if (j !== -1) {
        flush();
        let v = s.slice(i + n, j).replace(/\n/g, " ");
        if (v.length > 2 && v.startsWith(" ") && v.endsWith(" ") && v.trim() !== "") v = v.slice(1, -1);
        out.push({ t: "code", v });
        i = j + n;
        continue;
      }
      text += ticks;
      i += n;
      continue;
    }
    if (ch === "[" && nested) {
      const link = parseLink(s, i, depth, unclosed);
      if (link) {
        flush();
        out.push(link.node);
        i = link.end;
        continue;
      }
    }
    if (ch === "<") {
      autolinkRe.lastIndex = i;
      const m = autolinkRe.exec(s);
      if (m && safeURL(m[1])) {
        flush();
        out.push({ t: "a", href: safeURL(m[1]), c: [{ t: "text", v: m[1] }] });
        i += m[0].length;
        continue;
      }
    }
    if ((ch === "h" || ch === "H") && !/[\p{L}\p{N}]/u.test(s[i - 1] ?? "")) {
      urlRe.lastIndex = i;
      const m = urlRe.exec(s);
      if (m) {
        let url = m[0].replace(/[.,;:!?'"*_]+$/, "");
        // A closing parenthesis ends the URL unless the URL opened one.
        while (url.endsWith(")") && (url.match(/\(/g) ?? []).length < (url.match(/\)/g) ?? []).length) url = url.slice(0, -1);
        const href = safeURL(url);
        if (href) {
          flush();
          out.push({ t: "a", href, c: [{ t: "text", v: url }] });
          i += url.length;
          continue;
        }
      }
    }
    if ((ch === "*" || ch === "_" || ch === "~") && nested) {
      const em = parseEmphasis(s, i, depth, unclosed);
      if (em) {
        flush();
        out.push(em.node);
        i = em.end;
        continue;
      }
    }
    text += ch;
    i++;
  }
  flush();
  return out;
}

// parseEmphasis parses **strong**, *em*, ***both***, __strong__, _em_ or
// ~~del~~ at s[i], or returns null. unclosed remembers, for each
// delimiter, where a search for its closer found none (a later search
// would find none either), so that a run of lone delimiters parses in
// linear time.
function parseEmphasis(s, i, depth, unclosed) {
  const ch = s[i];
  let n = 1;
  while (s[i + n] === ch) n++;
  if (ch === "~" && n !== 2) return null;
  if (n > 3) return null;
  const open = ch.repeat(n);
  const after = s[i + n];
  if (after === undefined || /\s/.test(after)) return null;
  // An underscore inside a word (snake_case) is a letter.
  if (ch === "_" && /[\p{L}\p{N}]/u.test(s[i - 1] ?? "")) return null;
  if (i + n >= (unclosed[open] ?? Infinity)) return null;
  let j = i + n;
  for (;;) {
    j = s.indexOf(open, j);
    if (j === -1) {
      unclosed[open] = Math.min(unclosed[open] ?? Infinity, i + n);
      return null;
    }
    const before = s[j - 1];
    const next = s[j + n];
    if (j > i + n && !/\s/.test(before) && next !== ch && !(ch === "_" && /[\p{L}\p{N}]/u.test(next ?? ""))) break;
    j += n;
    while (s[j] === ch) j++;
  }
  const inner = inline(s.slice(i + n, j), depth + 1);
  let node;
  if (ch === "~") node = { t: "del", c: inner };
  else if (n === 1) node = { t: "em", c: inner };
  else if (n === 2) node = { t: "strong", c: inner };
  else node = { t: "strong", c: [{ t: "em", c: inner }] };
  return { node, end: j + n };
}

// maxLinkText bounds the search for a link's closing bracket and its
// target's closing parenthesis, so that a reply full of lone brackets
// renders in linear time.
const maxLinkText = 500;

// parseLink parses [text](url) at s[i], or returns null. A link whose URL
// is not allowed stays its text.
function parseLink(s, i, depth, next) {
  // No "]" near: no link (found at once, from the last search's answer).
  if (next["]"] === undefined || (next["]"] !== -1 && next["]"] < i)) next["]"] = s.indexOf("]", i);
  if (next["]"] === -1 || next["]"] - i > maxLinkText) return null;
  let brackets = 0;
  let j = i;
  const end = Math.min(s.length, i + maxLinkText);
  for (; j < end; j++) {
    if (s[j] === "\\") {
      j++;
    } else if (s[j] === "[") {
      brackets++;
    } else if (s[j] === "]") {
      if (--brackets === 0) break;
    }
  }
  if (j >= end || s[j + 1] !== "(") return null;
  let k = j + 2;
  if (next[")"] === undefined || (next[")"] !== -1 && next[")"] < k)) next[")"] = s.indexOf(")", k);
  if (next[")"] === -1 || next[")"] - k > maxLinkText) return null;
  let parens = 0;
  const targetEnd = Math.min(s.length, k + maxLinkText);
  for (; k < targetEnd; k++) {
    if (s[k] === "(") parens++;
    else if (s[k] === ")" && parens-- === 0) break;
    else if (s[k] === "\n") return null;
  }
  if (k >= targetEnd) return null;
  let target = s.slice(j + 2, k).trim();
  const title = /^(\S+)\s+("[^"]*"|'[^']*')$/.exec(target);
  if (title) target = title[1];
  if (target.startsWith("<") && target.endsWith(">")) target = target.slice(1, -1);
  const c = inline(s.slice(i + 1, j), depth + 1);
  const href = safeURL(target);
  return { node: href ? { t: "a", href, c } : { t: "span", c }, end: k + 1 };
}

// safeURL returns url normalized if it is an absolute http, https or
// mailto URL, and "" otherwise (javascript:, data:, relative paths).
export function safeURL(url) {
  let u;
  try {
    u = new URL(url);
  } catch {
    return "";
  }
  return u.protocol === "http:" || u.protocol === "https:" || u.protocol === "mailto:" ? u.href : "";
}

// render returns a DocumentFragment of doc holding the blocks' elements.
export function render(blocks, doc = document) {
  const frag = doc.createDocumentFragment();
  for (const b of blocks) frag.append(block(b, doc));
  return frag;
}

// renderMarkdown is render(parse(md)).
export function renderMarkdown(md, doc = document) {
  return render(parse(md), doc);
}

function el(doc, tag, children, attrs) {
  const e = doc.createElement(tag);
  if (attrs) for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (children) e.append(...children);
  return e;
}

function block(b, doc) {
  const inl = (c) => c.map((n) => inlineNode(n, doc));
  switch (b.t) {
    case "p":
      return el(doc, "p", inl(b.c));
    case "h":
      return el(doc, "h" + b.level, inl(b.c));
    case "hr":
      return el(doc, "hr");
    case "quote":
      return el(doc, "blockquote", [render(b.c, doc)]);
    case "ul":
    case "ol": {
      const list = el(doc, b.t, b.items.map((item) => el(doc, "li", [render(item, doc)])));
      if (b.t === "ol" && b.start !== 1) list.setAttribute("start", String(b.start));
      return list;
    }
    case "code": {
      const code = el(doc, "code");
      code.textContent = b.text;
      const copy = el(doc, "button", null, { type: "button", class: "copy" });
      copy.textContent = "Copy";
      const lang = el(doc, "span", null, { class: "lang" });
      lang.textContent = b.lang;
      return el(doc, "div", [el(doc, "div", [lang, copy], { class: "codebar" }), el(doc, "pre", [code])], { class: "codeblock" });
    }
    case "table": {
      const cell = (tag, c, k) => {
        const td = el(doc, tag, inl(c));
        if (b.align[k]) td.className = "align-" + b.align[k];
        return td;
      };
      const head = el(doc, "thead", [el(doc, "tr", b.head.map((c, k) => cell("th", c, k)))]);
      const body = el(doc, "tbody", b.rows.map((r) => el(doc, "tr", r.map((c, k) => cell("td", c, k)))));
      return el(doc, "div", [el(doc, "table", [head, body])], { class: "table" });
    }
  }
  throw new Error(`markdown: unknown block ${b.t}`);
}

function inlineNode(n, doc) {
  const inl = (c) => c.map((x) => inlineNode(x, doc));
  switch (n.t) {
    case "text":
      return doc.createTextNode(n.v);
    case "br":
      return el(doc, "br");
    case "code": {
      const e = el(doc, "code");
      e.textContent = n.v;
      return e;
    }
    case "strong":
    case "em":
    case "del":
    case "span":
      return el(doc, n.t, inl(n.c));
    case "a":
      return el(doc, "a", inl(n.c), { href: n.href, target: "_blank", rel: "noopener noreferrer nofollow" });
  }
  throw new Error(`markdown: unknown inline ${n.t}`);
}
