"""The root of the errors kafka-sql raises, so that a caller (the CLI, the session extension, a user's code) can
tell them from a bug: every error class of the package derives from `KafkaSqlError`."""


class KafkaSqlError(Exception):
    """An error kafka-sql raises on purpose, with a message that says what happened."""
