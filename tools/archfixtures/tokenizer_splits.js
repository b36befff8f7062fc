// Pre-token splits of the byte-level BPE split expressions, for inferno's
// hand-written matchers (tokenizer/pretokenize*.go):
//
//   node tools/archfixtures/tokenizer_splits.js > tokenizer/testdata/splits.json
//
// Texts are random strings over an alphabet of the cases that the
// expressions tell apart (upper, lower, title, modifier and other letters,
// marks, numbers of each kind, apostrophes and contractions, slashes,
// spaces, tabs, newlines, no-break spaces, punctuation, emoji), made with a
// fixed seed. Each is split with JavaScript's backtracking regular
// expressions, as transformers.js runs tokenizer.json's Split
// pre-tokenizer: the same leftmost-first semantics as Oniguruma, which
// Hugging Face tokenizers uses. The alphabet leaves out the few runes where
// the two engines' classes differ (U+0085 and U+FEFF for \s; U+017F and
// U+212A, which (?i:) folds in Oniguruma but transformers.js spells out as
// [sS]-style classes).
const contractions = "(?i:'s|'t|'re|'ve|'m|'ll|'d)";
const expressions = {
  qwen2: `${contractions}|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+`,
  cl100k: `${contractions}|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+`,
  o200k: `[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+${contractions}?|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*${contractions}?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+`,
  tekken: `[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+`,
};

// As transformers.js does: JavaScript has no inline (?i:...) groups.
function compile(expr) {
  const spelled = "(?:'([sS]|[tT]|[rR][eE]|[vV][eE]|[mM]|[lL][lL]|[dD]))";
  return new RegExp(expr.replaceAll(contractions, spelled), "gu");
}

const alphabet = [
  "a", "b", "s", "t", "e", "l", "d", "m", "r", "v", "z", "A", "B", "S", "T", "L", "D", "Z",
  "é", "É", "ß", "ǅ", "ʰ", "ª", "א", "中", "あ", "ー", "\u0301", "\u0308", "\u093f", "\u0903",
  "0", "1", "7", "²", "½", "Ⅻ", "١", "४",
  "'", "'", "'", "/", ".", ",", "!", "-", "_", "(", "$", "€", "😀", "\u200d", "\u200b",
  " ", " ", " ", " ", "\t", "\n", "\n", "\r", "\u00a0", "\u3000", "\u2028", "\f", "\v",
];

// mulberry32: a small deterministic generator.
function rng(seed) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const next = rng(31);
const texts = [
  "HTTPServer helloWorld DON'T don't I'D'VE ABC def iPhone XMLHttp",
  "1234567 ½½½½ ٢٣٤٥٦",
  "!!\n/x / /\n/ a/b\r\n/",
  "\u0301lone  \u0301x x\u0301 !\u0301 '\u0301s",
  "ǅemal ǅ ʰʰA Aʰa אבג'S",
];
for (let i = 0; i < 400; i++) {
  const n = 1 + Math.floor(next() * 24);
  let s = "";
  for (let k = 0; k < n; k++) s += alphabet[Math.floor(next() * alphabet.length)];
  texts.push(s);
}

const out = {};
for (const [name, expr] of Object.entries(expressions)) {
  const re = compile(expr);
  out[name] = texts.map((text) => {
    const pieces = text.match(re) || [];
    if (pieces.join("") !== text) throw new Error(`${name}: the pieces of ${JSON.stringify(text)} do not cover it`);
    return { text, pieces };
  });
}
process.stdout.write(JSON.stringify({ engine: `JavaScript RegExp, node ${process.version}`, splits: out }) + "\n");
