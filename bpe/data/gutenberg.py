"""``gutenberg-books``: the 14 MB benchmark corpus, rebuilt from its public sources.

21 public-domain Project Gutenberg books, as mirrored by the GITenberg project on GitHub
(``GITenberg/<Title>_<ebook id>``, branch ``master``), each the UTF-8 file ``<id>-0.txt`` where the
mirror has one and ``<id>.txt`` otherwise.  :func:`build_corpus` turns the book files into the corpus:

1. line ends become ``\\n``; the text between the ``*** START OF ...`` line and the
   ``*** END OF`` marker is kept (the licence header and footer go);
2. paragraphs are the pieces between blank lines; each loses its leading and trailing newlines
   (not its indentation), and whitespace-only pieces are dropped;
3. paragraphs are packed in order into documents: a document ends with the paragraph that brings
   its character count (paragraphs only, not the newlines between them) to 2,000 or more; a book's
   last document may be shorter;
4. each document is its paragraphs joined by ``\\n`` plus a final ``\\n``, and all documents of all
   books, in the order of :data:`BOOKS`, are joined by ``<|endoftext|>\\n``.

Built from the mirror's current files this gives the corpus the measured figures in docs/ were
made on, byte for byte (sha256 in :data:`SHA256`; ``python -m bpe data get
gutenberg-books``, :func:`bpe.data.download.fetch_books`, checks it and says so if a source file
changed).  ``corpora/gutenberg-sample.txt``
is every sixth of its documents (see ``corpora/gutenberg-sample.SOURCES``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from bpe.errors import BPEError

#: (GITenberg repository, file): the order is the corpus's order.
BOOKS = [
    ("A-Tale-of-Two-Cities_98", "98-0.txt"),
    ("Adventures-of-Huckleberry-Finn_76", "76-0.txt"),
    ("Alice-s-Adventures-in-Wonderland_11", "11-0.txt"),
    ("Andersen-s-Fairy-Tales_1597", "1597-0.txt"),
    ("Anne-of-Green-Gables_45", "45-0.txt"),
    ("Dracula_345", "345.txt"),
    ("Emma_158", "158-0.txt"),
    ("Frankenstein_84", "84-0.txt"),
    ("Great-Expectations_1400", "1400-0.txt"),
    ("Grimms-Fairy-Tales_2591", "2591-0.txt"),
    ("Jane-Eyre_1260", "1260.txt"),
    ("Little-Women_514", "514.txt"),
    ("Middlemarch_145", "145.txt"),
    ("Moby-Dick--Or-The-Whale_2701", "2701-0.txt"),
    ("Peter-Pan_16", "16-0.txt"),
    ("Pride-and-Prejudice_1342", "1342-0.txt"),
    ("The-Adventures-of-Sherlock-Holmes_1661", "1661.txt"),
    ("The-Adventures-of-Tom-Sawyer_74", "74-0.txt"),
    ("The-Jungle-Book_236", "236-0.txt"),
    ("The-Wonderful-Wizard-of-Oz_55", "55.txt"),
    ("Treasure-Island_120", "120-0.txt"),
]
SOURCE_URL = "https://raw.githubusercontent.com/GITenberg/{repo}/master/{file}"
DOCUMENT_CHARS = 2000
SEPARATOR = "<|endoftext|>\n"
SHA256 = "e7c7ba1d42d229c8d67dbf4a0a5c7008a4b89f6a70605422f02bd750ad5e0e70"

_START = re.compile(r"\*\*\* ?START OF[^\n]*\n")
_END = re.compile(r"\*\*\* ?END OF")
_BLANK_LINES = re.compile(r"\n\s*\n")


def book_paragraphs(text: str, name: str = "book") -> list[str]:
    """The paragraphs of one Project Gutenberg text, without its licence header and footer."""
    text = text.lstrip("\ufeff").replace("\r\n", "\n")
    start, end = _START.search(text), _END.search(text)
    if start is None or end is None or end.start() < start.end():
        raise BPEError(f"{name} has no '*** START OF' ... '*** END OF' markers; is it a Project Gutenberg text?")
    pieces = (piece.strip("\n") for piece in _BLANK_LINES.split(text[start.end():end.start()]))
    return [piece for piece in pieces if piece.strip()]


def documents(paragraphs: Iterable[str], size: int = DOCUMENT_CHARS) -> list[str]:
    """Pack paragraphs into documents of at least ``size`` characters (the last may be shorter).

    >>> documents(["aaa", "bb", "c", "dddd", "e"], size=4)
    ['aaa\\nbb\\n', 'c\\ndddd\\n', 'e\\n']
    """
    out, current, chars = [], [], 0
    for paragraph in paragraphs:
        current.append(paragraph)
        chars += len(paragraph)
        if chars >= size:
            out.append("\n".join(current) + "\n")
            current, chars = [], 0
    if current:
        out.append("\n".join(current) + "\n")
    return out


def build_corpus(books: Iterable[tuple[str, str]]) -> str:
    """The corpus text from ``(name, text)`` per book, in order."""
    docs: list[str] = []
    for name, text in books:
        docs += documents(book_paragraphs(text, name))
    return SEPARATOR.join(docs)
