"""Type stub of the native extension (worker/native, Rust): its API is checked by its tests."""

from typing import Any

def __getattr__(name: str) -> Any: ...
