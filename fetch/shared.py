"""Live objects of a process handed to its Scrapy components through the settings.

A component gets what it needs in ``from_crawler``, from ``crawler.settings`` (Scrapy's
way): the process's host gate (``fetch/politeness.HOST_GATE``), its address policy
(``fetch/addresses.ADDRESS_POLICY``), the consumer's settle step. Scrapy deep-copies
the settings for each crawler, and the process keeps its own copy (the DNS resolver is
built from it): a :class:`Shared` value is copied as itself, so every component of the
process gets the one object.
"""

from __future__ import annotations

from typing import Any, Generic, TypeVar

from scrapy.settings import BaseSettings

T = TypeVar("T")


class Shared(Generic[T]):
    __slots__ = ("value",)

    def __init__(self, value: T) -> None:
        self.value = value

    def __deepcopy__(self, memo: dict[int, Any]) -> Shared[T]:
        return self

    def __repr__(self) -> str:  # Scrapy may log the settings
        return f"<shared {type(self.value).__name__}>"


class SharedKey(Generic[T]):
    """The name of a shared object in the settings, and its type."""

    def __init__(self, name: str) -> None:
        self.name = name

    def put(self, settings: dict[str, Any] | BaseSettings, value: T) -> None:
        settings[self.name] = Shared(value)

    def get(self, settings: BaseSettings) -> T | None:
        holder = settings.get(self.name)
        if holder is None:
            return None
        assert isinstance(holder, Shared), f"{self.name} must be set with SharedKey.put"
        value: T = holder.value
        return value

    def require(self, settings: BaseSettings) -> T:
        value = self.get(settings)
        if value is None:
            raise KeyError(f"{self.name} is not set: build the settings with fetch/settings.py")
        return value
