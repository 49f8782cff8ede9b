"""Enums of words, shared by every layer (the gate level a ``--help`` reads included, so it imports nothing of
ad-diff)."""

from __future__ import annotations

from enum import Enum


class WordEnum(str, Enum):
    """An enum of words: each member reads as its value in messages and f-strings (``f"{x}"`` is
    ``match_loss``, not ``Category.MATCH_LOSS``, on every Python version), and compares equal to it."""

    def __str__(self) -> str:
        return str(self.value)

    def __format__(self, spec: str) -> str:
        return format(str(self.value), spec)


__all__ = ["WordEnum"]
