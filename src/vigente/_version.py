"""The version of vigente (kept apart so that any module may import it)."""

__version__ = "0.1.0"
