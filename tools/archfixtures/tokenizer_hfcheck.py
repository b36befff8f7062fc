#!/usr/bin/env python3
"""Checks a tokenizer fixture's cases.json against Hugging Face tokenizers.

    python3 tools/archfixtures/tokenizer_hfcheck.py testdata/gemma3-tokenizer gemma3 ...
    python3 tools/archfixtures/tokenizer_hfcheck.py --write OUTDIR testdata/gemma3-tokenizer gemma3 ...

Arguments come in pairs: a fixture folder (tokenizer.json, plain or .gz,
and cases.json) and the family whose texts of tokenizer_texts.json it
holds. For each, encodes the texts with the tokenizers library
(add_special_tokens=False) and compares the ids and the decoded text with
cases.json, which tokenizer_cases.js makes with transformers.js. Prints
each difference and exits with status 1 if there is one. With --write,
also writes OUTDIR/NAME/cases.json with tokenizers' ids.
"""

import gzip
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def read_text(path):
    if not os.path.exists(path) and os.path.exists(path + ".gz"):
        with gzip.open(path + ".gz", "rt", encoding="utf-8") as f:
            return f.read()
    with open(path, encoding="utf-8") as f:
        return f.read()


def check(folder, family, outdir):
    import tokenizers

    tok = tokenizers.Tokenizer.from_str(read_text(os.path.join(folder, "tokenizer.json")))
    texts = json.loads(read_text(os.path.join(HERE, "tokenizer_texts.json")))
    want = {c["text"]: c for c in json.loads(read_text(os.path.join(folder, "cases.json")))["cases"]}
    bad = 0
    cases = []
    for text in texts["common"] + texts["special"][family]:
        ids = tok.encode(text, add_special_tokens=False).ids
        decoded = tok.decode(ids, skip_special_tokens=False)
        cases.append(dict(text=text, ids=ids, decoded=decoded))
        w = want.get(text)
        if w is None:
            print(f"{folder}: {text!r} is not in cases.json")
            bad += 1
        elif w["ids"] != ids or w["decoded"] != decoded:
            print(f"{folder}: {text!r}\n  tokenizers {ids} {decoded!r}\n  cases.json {w['ids']} {w['decoded']!r}")
            bad += 1
    print(f"{folder}: {len(cases)} texts, {bad} differ (tokenizers {tokenizers.__version__})")
    if outdir:
        d = os.path.join(outdir, os.path.basename(os.path.normpath(folder)))
        os.makedirs(d, exist_ok=True)
        label = f"Hugging Face tokenizers {tokenizers.__version__} on {os.path.basename(os.path.normpath(folder))}/tokenizer.json"
        with open(os.path.join(d, "cases.json"), "w", encoding="utf-8") as f:
            json.dump(dict(tokenizer=label, cases=cases), f, ensure_ascii=False, indent=1)
            f.write("\n")
    return bad


def main(argv):
    outdir = None
    if argv[:1] == ["--write"]:
        outdir, argv = argv[1], argv[2:]
    if not argv or len(argv) % 2:
        sys.exit(__doc__)
    bad = sum(check(argv[i], argv[i + 1], outdir) for i in range(0, len(argv), 2))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main(sys.argv[1:])
