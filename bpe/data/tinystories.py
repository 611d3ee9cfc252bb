"""``tinystories-synth``: a deterministic generator of TinyStories-like children's stories.

The articles the ladder follows time their trainers on TinyStories (2.2 GB of short stories written
by GPT-4 for small children), at vocab 10,000.  It is the *low-diversity* regime: a small vocabulary
of common words repeated millions of times, so a merge touches many words and the pair table stays
small.  ``python -m bpe data get tinystories-synth --size 100MB`` writes
``data/tinystories-synth-100MB.txt`` without the 2.2 GB download, so the articles' steps can be
reproduced at a size where each of them shows.

What it models (``docs/data.md`` says what it was calibrated on and what was assumed):

* stories of one to five short paragraphs, one sentence pattern at a time: an opening ("Once upon a
  time, there was a little cat named Tom."), actions, feelings, dialogue in straight or curly quotes,
  and an ending, sometimes with a moral;
* a small hand-written vocabulary of concrete nouns, verbs (present and past), adjectives, places and
  feelings, drawn with Zipf weights, plus common first names;
* a thin tail of rarer words and names (invented from syllables, Zipf-ranked), which is what makes
  the number of distinct pre-tokens keep growing slowly with the corpus, as it does in the real one;
* ``<|endoftext|>`` on its own line between stories, as in the real file.

What it leaves out: meaning (a story's sentences are chosen independently, so they seldom follow one
another), numbers, the odd typo and non-English word of the real data beyond the tail above.

Determinism: as :mod:`bpe.data.webtext`, one ``random.Random(seed)`` (its :class:`~bpe.data.generated.Draws`),
integer weights, no iteration over sets; the same seed gives the same stream on any machine, and a smaller
file is a prefix of a larger one.
"""

from __future__ import annotations

import os
import random
from collections.abc import Callable, Iterator

from bpe.data.generated import CODAS, NUCLEI, ONSETS, Draws, write_documents, zipf_cum_weights

DEFAULT_SEED = 0
SEPARATOR = "<|endoftext|>"

NAMES = ("Lily Tim Ben Sue Max Mia Tom Anna Sam Lucy Jack Mom Dad Amy Bob Jill Zoe Leo Ella Jake Kate "
         "Molly Sara Timmy Billy Jenny Sally Mark Lisa Ollie Daisy Rosie Kitty Spot Buddy Mittens Fluffy "
         "Jane Joe Ann Emma Mike Peter Nick Grace Rose Fin Pip Benny Tommy Sophie Lila Luna Sky Bella "
         "Toby Rex Coco Bunny Max Lucky Polly Freddy Teddy Susie Kim Dan Ted Jen Meg Nina Oscar Ruby").split()
ANIMALS = ("cat dog bird bunny fish bear duck frog mouse lion owl pig cow horse sheep fox squirrel puppy "
           "kitten bee butterfly turtle elephant monkey tiger giraffe snake ant spider chicken deer wolf "
           "whale dolphin otter penguin zebra goat rabbit bug worm dragon unicorn dinosaur").split()
THINGS = ("ball toy box tree flower car book hat cake apple boat kite doll truck bike cookie rock stick "
          "leaf shell star moon sun cup bowl spoon bed chair door window key ring bag shoe sock coat "
          "sandwich pie candy gift picture drum song game puzzle block crayon paper pen balloon bell "
          "blanket pillow basket wagon train plane rope swing slide sand water bubble mirror clock lamp "
          "jar map coin button feather egg carrot banana orange grape seed bone nest cloud rainbow "
          "snowman sword crown wand castle robot rocket vase thumb bench fence gate road hill").split()
PLACES = ("park garden forest house yard school beach lake river pond farm zoo store town sky sea woods "
          "kitchen room backyard playground field jungle cave mountain street city island meadow "
          "village shop library hospital bakery tree").split()
PEOPLE = "girl boy mom dad friend teacher grandma grandpa sister brother baby man woman king queen".split()
ADJECTIVES = ("big little small happy sad red blue green yellow pink purple shiny soft old new funny kind "
              "nice pretty tall long tiny fast slow brave scared tired hungry warm cold wet dry loud quiet "
              "bright dark sweet yummy fluffy special beautiful colorful strong smart silly gentle friendly "
              "curious lonely busy clean dirty round heavy light magic fancy sparkly sticky spicy huge "
              "wild calm careful proud lucky famous messy noisy grumpy cheerful helpful polite honest "
              "fragile reliable amazing wonderful strange").split()
FEELINGS = ("happy sad scared excited angry surprised proud sorry tired hungry worried glad curious "
            "upset bored shy brave thankful").split()
# (present, past): the stories use both, the past far more often.
VERBS = [tuple(pair.split("/")) for pair in (
    "play/played jump/jumped run/ran walk/walked look/looked see/saw find/found make/made help/helped "
    "share/shared give/gave take/took eat/ate drink/drank sing/sang dance/danced swim/swam fly/flew "
    "climb/climbed build/built draw/drew paint/painted read/read hug/hugged smile/smiled laugh/laughed "
    "cry/cried hide/hid seek/sought catch/caught throw/threw kick/kicked push/pushed pull/pulled "
    "open/opened close/closed clean/cleaned wash/washed cook/cooked bake/baked pick/picked plant/planted "
    "grow/grew ride/rode drive/drove carry/carried bring/brought fix/fixed explore/explored "
    "listen/listened watch/watched wait/waited try/tried learn/learned love/loved like/liked want/wanted "
    "need/needed feel/felt think/thought know/knew keep/kept lose/lost win/won visit/visited "
    "follow/followed touch/touched shake/shook roll/rolled bounce/bounced splash/splashed").split()]
TIME_PHRASES = ("One day", "Once upon a time", "The next day", "Then", "Later", "After a while", "Soon",
                "Every day", "That night", "In the morning", "Suddenly", "At the end of the day")
ADVERBS = "very really so too".split()
_QUOTES = (('"', '"'), ('"', '"'), ("\u201c", "\u201d"))
_SUFFIXES = ("",) * 6 + ("y", "er", "ie", "o", "a", "s", "ed", "ing", "ly")


class StoryGenerator:
    """The stream of stories for one seed; :meth:`stories` yields them without end."""

    def __init__(self, seed: int = DEFAULT_SEED, *, rare_words: int = 120_000, rare_names: int = 20_000):
        self.rng = rng = Draws(seed)
        self.names_cum = zipf_cum_weights(len(NAMES), shift=20)
        self.animals_cum = zipf_cum_weights(len(ANIMALS), shift=30)
        self.things_cum = zipf_cum_weights(len(THINGS), shift=30)
        self.places_cum = zipf_cum_weights(len(PLACES), shift=20)
        self.adjectives_cum = zipf_cum_weights(len(ADJECTIVES), shift=30)
        self.verbs_cum = zipf_cum_weights(len(VERBS), shift=30)
        self.rare = [self._invent(2 + rng.randrange(2)) for _ in range(rare_words)]
        self.rare_cum = zipf_cum_weights(rare_words, shift=100)
        self.rare_names = [self._invent(1 + rng.randrange(2)).capitalize() for _ in range(rare_names)]
        self.rare_names_cum = zipf_cum_weights(rare_names, shift=100)

    # --- words --------------------------------------------------------------------------------
    def _invent(self, syllables: int) -> str:
        rng = self.rng
        parts = []
        for _ in range(syllables):
            parts += (ONSETS[rng.randrange(len(ONSETS))], NUCLEI[rng.randrange(len(NUCLEI))],
                      CODAS[rng.randrange(len(CODAS))])
        parts.append(_SUFFIXES[rng.randrange(len(_SUFFIXES))])
        return "".join(parts) or "a"

    def _pick(self, words, cum) -> str:
        return self.rng.choices(words, cum_weights=cum)[0]

    def name(self) -> str:
        # One name in 25 comes from the long tail (a rare name), the rest from the common ones.
        if self.rng.randrange(25) == 0:
            return self._pick(self.rare_names, self.rare_names_cum)
        return self._pick(NAMES, self.names_cum)

    def noun(self) -> str:
        rng = self.rng
        if rng.randrange(60) == 0:  # the rare-word tail
            return self._pick(self.rare, self.rare_cum)
        kind = rng.randrange(5)
        if kind < 2:
            return self._pick(ANIMALS, self.animals_cum)
        if kind < 4:
            return self._pick(THINGS, self.things_cum)
        return PEOPLE[rng.randrange(len(PEOPLE))]

    def adjective(self) -> str:
        if self.rng.randrange(60) == 0:
            return self._pick(self.rare, self.rare_cum)
        return self._pick(ADJECTIVES, self.adjectives_cum)

    def verb(self, past: bool) -> str:
        if self.rng.randrange(80) == 0:
            word = self._pick(self.rare, self.rare_cum)
            return word + "ed" if past else word
        return self._pick(VERBS, self.verbs_cum)[1 if past else 0]

    def place(self) -> str:
        return self._pick(PLACES, self.places_cum)

    def feeling(self) -> str:
        return FEELINGS[self.rng.randrange(len(FEELINGS))]

    def article(self, word: str) -> str:
        return "an" if word[0] in "aeiou" else "a"

    def a(self, noun: str, adjective: bool = True) -> str:
        """``a big dog``, ``an old owl``, ``the cat``."""
        rng = self.rng
        if rng.randrange(3) == 0:
            return "the " + noun
        if adjective and rng.randrange(2):
            adj = self.adjective()
            return f"{self.article(adj)} {adj} {noun}"
        return f"{self.article(noun)} {noun}"

    # --- sentences ----------------------------------------------------------------------------
    #: What a character says: one of these, each drawing its words in the order written.
    _SAYINGS = (
        lambda s, other: f"Can I {s.verb(False)} with you, {other}?",
        lambda s, other: f"Look at the {s.adjective()} {s.noun()}!",
        lambda s, other: f"Let's {s.verb(False)} together!",
        lambda s, other: f"Thank you, {other}!",
        lambda s, other: f"I am {s.rng.choice(ADVERBS)} {s.feeling()}.",
        lambda s, other: f"Wow, this is {s.rng.choice(ADVERBS)} {s.adjective()}!",
        lambda s, other: f"Do you want to {s.verb(False)} the {s.noun()}?",
        lambda s, other: f"Yes, I will {s.verb(False)} it.",
        lambda s, other: f"Don't be {s.feeling()}, {other}. We can {s.verb(False)} it.",
        lambda s, other: f"Hi, {other}! What are you doing?",
    )

    def _quote(self, hero: str, other: str) -> str:
        rng = self.rng
        text = self._SAYINGS[rng.randrange(len(self._SAYINGS))](self, other)
        q = _QUOTES[rng.randrange(len(_QUOTES))]
        said = ("said", "said", "said", "asked", "shouted", "replied", "whispered")[rng.randrange(7)]
        if rng.randrange(2):
            return f"{hero} {said}, {q[0]}{text}{q[1]}"
        return f"{q[0]}{text}{q[1]} {said} {hero}."

    def _sentence(self, hero: str, pronoun: str, other: str) -> str:
        rng = self.rng
        kind = rng.randrange(16)
        subject = hero if rng.randrange(2) else pronoun.capitalize()
        if kind < 3:
            return self._quote(hero, other)
        if kind == 3:
            return f"{subject} {self.verb(True)} {self.a(self.noun())} in the {self.place()}."
        if kind == 4:
            return f"{subject} loved to {self.verb(False)} with {pronoun_possessive(pronoun)} {self.noun()}."
        if kind == 5:
            return f"{subject} saw {self.a(self.noun())}."
        if kind == 6:
            return f"{subject} was {rng.choice(ADVERBS)} {self.feeling()}."
        if kind == 7:
            return (f"{TIME_PHRASES[rng.randrange(len(TIME_PHRASES))]}, {hero} wanted to {self.verb(False)} "
                    f"the {self.noun()}.")
        if kind == 8:
            return f"The {self.noun()} was {self.adjective()} and {self.adjective()}."
        if kind == 9:
            return f"{hero} and {other} {self.verb(True)} together."
        if kind == 10:
            return f"They {self.verb(True)} all day and had lots of fun."
        if kind == 11:
            return (f"{subject} {('went', 'ran', 'walked')[rng.randrange(3)]} to the {self.place()} "
                    f"to {self.verb(False)}.")
        if kind == 12:
            return f"But the {self.noun()} was too {self.adjective()}."
        if kind == 13:
            return f"{other} {self.verb(True)} {self.a(self.noun())} and gave it to {hero}."
        if kind == 14:
            return f"{subject} did not know what to do."
        return f"{subject} {self.verb(True)} and {self.verb(True)}."

    #: How a story opens: one of these, after the hero's adjective is drawn (``a`` is "a big" or "an old").
    _OPENINGS = (
        lambda s, a, kind, hero: f"Once upon a time, there was {a} {kind} named {hero}.",
        lambda s, a, kind, hero: f"Once upon a time, in {s.a(s.place())}, there lived {a} {kind} named {hero}.",
        lambda s, a, kind, hero: f"One day, {a} {kind} named {hero} went to the {s.place()}.",
        lambda s, a, kind, hero: f"{hero} was {a} {kind}.",
    )

    def _opening(self, hero: str, kind_noun: str) -> str:
        adj = self.adjective()
        opening = self._OPENINGS[self.rng.randrange(len(self._OPENINGS))]
        return opening(self, f"{self.article(adj)} {adj}", kind_noun, hero)

    #: How a story ends: one of these, each drawing its words in the order written.
    _ENDINGS = (
        lambda s, hero, other: f"From that day on, {hero} and {other} were best friends.",
        lambda s, hero, other: f"{hero} learned that it is good to {s.verb(False)} and to be {s.adjective()}.",
        lambda s, hero, other: "They lived happily ever after.",
        lambda s, hero, other: f"{hero} smiled and went home with the {s.noun()}.",
        lambda s, hero, other: f"And that is how {hero} found {s.a(s.noun())}.",
    )

    def _ending(self, hero: str, other: str) -> str:
        return self._ENDINGS[self.rng.randrange(len(self._ENDINGS))](self, hero, other)

    def story(self) -> str:
        """One story: an opening, one to five paragraphs, an ending."""
        rng = self.rng
        hero = self.name()
        other = self.name()
        if other == hero:
            other = "Mom"
        pronoun = ("he", "she", "it")[rng.randrange(3)]
        kind_noun = ("girl", "boy")[("she", "he").index(pronoun)] if pronoun != "it" else self.noun()
        paragraphs = [[self._opening(hero, kind_noun)]]
        for p in range(1 + _few(rng)):
            sentences = paragraphs[-1] if p == 0 else []
            for _ in range(3 + rng.randrange(8)):
                sentences.append(self._sentence(hero, pronoun, other))
            if p:
                paragraphs.append(sentences)
        paragraphs[-1].append(self._ending(hero, other))
        return "\n".join(" ".join(sentences) for sentences in paragraphs)

    def stories(self) -> Iterator[str]:
        while True:
            yield self.story()


def pronoun_possessive(pronoun: str) -> str:
    return {"he": "his", "she": "her", "it": "its"}[pronoun]


def _few(rng: random.Random) -> int:
    """0-4 extra paragraphs, 1 and 2 the most often."""
    return (0, 1, 1, 1, 2, 2, 2, 3, 4)[rng.randrange(9)]


def generate(path: str | os.PathLike, size: int, *, seed: int = DEFAULT_SEED,
             on_bytes: Callable[[int], None] | None = None) -> dict:
    """Write stories of the ``seed`` stream to ``path`` until ``size`` bytes are reached; statistics.

    Each story is followed by ``\\n<|endoftext|>\\n``, as in TinyStoriesV2.  The file is written under
    a temporary name and renamed at the end.  Returns ``{"bytes", "documents", "non_ascii_bytes"}``.
    """
    stories = (story + "\n" + SEPARATOR + "\n" for story in StoryGenerator(seed).stories())
    return write_documents(path, size, stories, "tinystories-synth", on_bytes=on_bytes)
