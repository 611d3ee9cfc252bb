"""The one exception type users see.

Every problem a user can cause (bad path, bad vocab size, bad bytes, a worker that died) is raised as
:class:`BPEError` with a sentence that names the problem; the CLI prints that sentence and exits
non-zero instead of showing a traceback.
"""


class BPEError(Exception):
    """A problem with the user's input or environment, with a message meant for the user."""
