"""Counting: pre-tokens -> counts, in this process or in the pool, from a file or a stream of documents.

* ``plain``: the plain counter, ``Counter(regex.findall(...))``, the definition every counter is held to, and
  the serial file counter (v1, v2);
* ``fast``: the fast split counted, the same counts (v6-v8);
* ``parallel``: a file's chunks or a stream's texts counted in the process pool, the counts reduced (v3 on);
* ``documents``: a corpus's documents counted by a rung's counter of texts as they are read;
* ``parts``: counts split in parts by pre-token, as a cluster's tasks send them on to be summed.

(v9 counts in its own compiled tables: ``variants/_v9_count.pyx``.)
"""
