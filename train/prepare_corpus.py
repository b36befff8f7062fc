#!/usr/bin/env python3
"""Build the training corpus: the King James Bible as plain prose.

Source: Debian's `bible-kjv` package (public-domain KJV text; on Debian or
Ubuntu, as root: `apt-get install -y bible-kjv`). Its `bible` program prints
the whole Bible with

    bible -f 'Gen1:1-Rev22:21'

one verse a line, each prefixed by a reference ("Ge1:1 In the beginning God
created ...", "1Sm3:4 That the LORD called Samuel ..."). The text itself has
no markup (only letters, digits, spaces and , . : ; ? ' ! ( ) -), so the only
thing to strip is the reference. This script turns it into

    The Book of Genesis

    Chapter 1

    In the beginning God created the heaven and the earth.
    And the earth was without form, and void; ...
    ...

    Chapter 2

    ...

i.e. one verse a line (no verse numbers), a blank line around every
heading, a "Chapter N" heading before each chapter ("Psalm N" in the Psalms)
and a title before each book. Reading it back (train.py) is the reverse:
a block (lines between blank lines) that reads "Chapter N"/"Psalm N" starts
a chapter, the block after it holds its verses, any other single-line block
is a book title; parse_corpus() below does exactly that.

Usage (from the repository root):

    python3 train/prepare_corpus.py                # runs `bible`, writes
                                                   # train/data/kjv.txt and .gz
    python3 train/prepare_corpus.py --raw FILE     # from a saved `bible -f` dump

The gzip is written with mtime 0 and no file name, so the same text always
gives the same bytes (the .gz is committed; kjv.txt is not).
"""

import argparse
import gzip
import io
import os
import re
import subprocess
import sys

# (abbreviation printed by `bible`, name used in references, book title).
# The order is the canonical order in which `bible` prints the books.
BOOKS = [
    ("Ge", "Genesis", "The Book of Genesis"),
    ("Exo", "Exodus", "The Book of Exodus"),
    ("Lev", "Leviticus", "The Book of Leviticus"),
    ("Num", "Numbers", "The Book of Numbers"),
    ("Deu", "Deuteronomy", "The Book of Deuteronomy"),
    ("Josh", "Joshua", "The Book of Joshua"),
    ("Jdgs", "Judges", "The Book of Judges"),
    ("Ruth", "Ruth", "The Book of Ruth"),
    ("1Sm", "1 Samuel", "The First Book of Samuel"),
    ("2Sm", "2 Samuel", "The Second Book of Samuel"),
    ("1Ki", "1 Kings", "The First Book of the Kings"),
    ("2Ki", "2 Kings", "The Second Book of the Kings"),
    ("1Chr", "1 Chronicles", "The First Book of the Chronicles"),
    ("2Chr", "2 Chronicles", "The Second Book of the Chronicles"),
    ("Ezra", "Ezra", "The Book of Ezra"),
    ("Neh", "Nehemiah", "The Book of Nehemiah"),
    ("Est", "Esther", "The Book of Esther"),
    ("Job", "Job", "The Book of Job"),
    ("Psa", "Psalm", "The Book of Psalms"),
    ("Prv", "Proverbs", "The Proverbs"),
    ("Eccl", "Ecclesiastes", "Ecclesiastes, or the Preacher"),
    ("SSol", "Song of Solomon", "The Song of Solomon"),
    ("Isa", "Isaiah", "The Book of the Prophet Isaiah"),
    ("Jer", "Jeremiah", "The Book of the Prophet Jeremiah"),
    ("Lam", "Lamentations", "The Lamentations of Jeremiah"),
    ("Eze", "Ezekiel", "The Book of the Prophet Ezekiel"),
    ("Dan", "Daniel", "The Book of Daniel"),
    ("Hos", "Hosea", "The Book of Hosea"),
    ("Joel", "Joel", "The Book of Joel"),
    ("Amos", "Amos", "The Book of Amos"),
    ("Obad", "Obadiah", "The Book of Obadiah"),
    ("Jonah", "Jonah", "The Book of Jonah"),
    ("Mic", "Micah", "The Book of Micah"),
    ("Nahum", "Nahum", "The Book of Nahum"),
    ("Hab", "Habakkuk", "The Book of Habakkuk"),
    ("Zep", "Zephaniah", "The Book of Zephaniah"),
    ("Hag", "Haggai", "The Book of Haggai"),
    ("Zec", "Zechariah", "The Book of Zechariah"),
    ("Mal", "Malachi", "The Book of Malachi"),
    ("Mat", "Matthew", "The Gospel According to Saint Matthew"),
    ("Mark", "Mark", "The Gospel According to Saint Mark"),
    ("Luke", "Luke", "The Gospel According to Saint Luke"),
    ("John", "John", "The Gospel According to Saint John"),
    ("Acts", "Acts", "The Acts of the Apostles"),
    ("Rom", "Romans", "The Epistle of Paul the Apostle to the Romans"),
    ("1Cor", "1 Corinthians", "The First Epistle of Paul the Apostle to the Corinthians"),
    ("2Cor", "2 Corinthians", "The Second Epistle of Paul the Apostle to the Corinthians"),
    ("Gal", "Galatians", "The Epistle of Paul the Apostle to the Galatians"),
    ("Eph", "Ephesians", "The Epistle of Paul the Apostle to the Ephesians"),
    ("Phi", "Philippians", "The Epistle of Paul the Apostle to the Philippians"),
    ("Col", "Colossians", "The Epistle of Paul the Apostle to the Colossians"),
    ("1Th", "1 Thessalonians", "The First Epistle of Paul the Apostle to the Thessalonians"),
    ("2Th", "2 Thessalonians", "The Second Epistle of Paul the Apostle to the Thessalonians"),
    ("1Tim", "1 Timothy", "The First Epistle of Paul the Apostle to Timothy"),
    ("2Tim", "2 Timothy", "The Second Epistle of Paul the Apostle to Timothy"),
    ("Titus", "Titus", "The Epistle of Paul to Titus"),
    ("Phmn", "Philemon", "The Epistle of Paul to Philemon"),
    ("Heb", "Hebrews", "The Epistle of Paul the Apostle to the Hebrews"),
    ("Jas", "James", "The General Epistle of James"),
    ("1Pet", "1 Peter", "The First Epistle General of Peter"),
    ("2Pet", "2 Peter", "The Second Epistle General of Peter"),
    ("1Jn", "1 John", "The First Epistle General of John"),
    ("2Jn", "2 John", "The Second Epistle of John"),
    ("3Jn", "3 John", "The Third Epistle of John"),
    ("Jude", "Jude", "The General Epistle of Jude"),
    ("Rev", "Revelation", "The Revelation of Saint John the Divine"),
]

VERSE_RE = re.compile(r"^([1-3]?[A-Za-z]+)(\d+):(\d+) (.*)$")
HEADING_RE = re.compile(r"^(Chapter|Psalm) (\d+)$")


def chapter_heading(ref_name, chapter):
    """Heading of a chapter: "Psalm 23" in the Psalms, "Chapter 5" elsewhere."""
    return f"Psalm {chapter}" if ref_name == "Psalm" else f"Chapter {chapter}"


def format_corpus(raw):
    """Turns `bible -f` output into the corpus text (see the module doc)."""
    by_abbr = {abbr: i for i, (abbr, _, _) in enumerate(BOOKS)}
    # books[i] = list of (chapter, [verse texts]), in order of appearance.
    books = [[] for _ in BOOKS]
    last = None  # (book index, chapter, verse) of the previous line
    for n, line in enumerate(raw.splitlines(), 1):
        if not line.strip():
            continue
        m = VERSE_RE.match(line)
        if not m:
            raise ValueError(f"line {n}: not a verse: {line[:60]!r}")
        abbr, ch, vs, text = m.group(1), int(m.group(2)), int(m.group(3)), m.group(4)
        if abbr not in by_abbr:
            raise ValueError(f"line {n}: unknown book {abbr!r}")
        b = by_abbr[abbr]
        # The dump must be in canonical order, every verse once.
        if last is not None and (b, ch, vs) <= last:
            raise ValueError(f"line {n}: out of order: {line[:30]!r}")
        last = (b, ch, vs)
        text = " ".join(text.split())  # normalise runs of spaces
        chapters = books[b]
        if not chapters or chapters[-1][0] != ch:
            chapters.append((ch, []))
        chapters[-1][1].append(text)
    out = io.StringIO()
    for (abbr, ref, title), chapters in zip(BOOKS, books):
        if not chapters:
            raise ValueError(f"book {abbr} missing from the dump")
        out.write(title + "\n\n")
        for ch, verses in chapters:
            out.write(chapter_heading(ref, ch) + "\n\n")
            out.write("\n".join(verses) + "\n\n")
    return out.getvalue().rstrip("\n") + "\n"


def parse_corpus(text):
    """Reads the corpus text back: a list of books, each
    {"ref": "Genesis", "title": ..., "chapters": [(n, [verse, ...]), ...]}.
    The book's reference name comes from BOOKS by its title."""
    by_title = {title: ref for _, ref, title in BOOKS}
    books = []
    pending = None  # chapter number whose verses are the next block
    for block in re.split(r"\n\s*\n", text.strip("\n")):
        lines = block.split("\n")
        m = HEADING_RE.match(block) if len(lines) == 1 else None
        if pending is not None:
            books[-1]["chapters"].append((pending, lines))
            pending = None
        elif m:
            if not books:
                raise ValueError("chapter heading before any book title")
            pending = int(m.group(2))
        elif len(lines) == 1:
            if block not in by_title:
                raise ValueError(f"unknown book title {block!r}")
            books.append({"ref": by_title[block], "title": block, "chapters": []})
        else:
            raise ValueError(f"unexpected block: {block[:60]!r}")
    if pending is not None:
        raise ValueError("chapter heading without verses at the end")
    return books


def write_gzip(path, data):
    """gzip with a fixed header (no name, mtime 0): reproducible bytes."""
    with open(path, "wb") as f:
        with gzip.GzipFile(filename="", mode="wb", fileobj=f, compresslevel=9, mtime=0) as g:
            g.write(data)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--raw", help="a saved `bible -f 'Gen1:1-Rev22:21'` dump (default: run `bible`)")
    ap.add_argument("--out", default=os.path.join(here, "data", "kjv.txt"), help="corpus text to write (the .gz goes beside it)")
    args = ap.parse_args()

    if args.raw:
        with open(args.raw, encoding="utf-8") as f:
            raw = f.read()
    else:
        try:
            raw = subprocess.run(["bible", "-f", "Gen1:1-Rev22:21"], check=True,
                                 capture_output=True, text=True).stdout
        except FileNotFoundError:
            sys.exit("`bible` not found: apt-get install -y bible-kjv (Debian/Ubuntu), or pass --raw FILE")
    text = format_corpus(raw)

    # Round-trip check: the parser used by train.py sees every verse.
    books = parse_corpus(text)
    n_verses = sum(len(v) for b in books for _, v in b["chapters"])
    n_chapters = sum(len(b["chapters"]) for b in books)
    n_raw = sum(1 for line in raw.splitlines() if line.strip())
    if n_verses != n_raw:
        sys.exit(f"round trip lost verses: {n_verses} != {n_raw}")

    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    data = text.encode("utf-8")
    with open(args.out, "wb") as f:
        f.write(data)
    write_gzip(args.out + ".gz", data)
    print(f"{len(books)} books, {n_chapters} chapters, {n_verses} verses")
    print(f"{args.out}: {len(data)} bytes; {args.out}.gz: {os.path.getsize(args.out + '.gz')} bytes")


if __name__ == "__main__":
    main()
