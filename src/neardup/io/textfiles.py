"""Directories of .txt files (or one .txt file): each file a document, its relative path the id."""

from __future__ import annotations

import codecs
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from neardup.errors import InputError, remedy
from neardup.io.source import Source, encoding_hint, skip_advice

__all__ = ["TextFilesSource"]


class TextFilesSource(Source):
    """One .txt file, or a directory of them (searched recursively, sorted by relative path)."""

    format = "txt"

    @property
    def size(self) -> int:
        """Bytes of all the files."""
        return sum(f.stat().st_size for f in self.files())

    def files(self) -> list[Path]:
        """The .txt files, in the order they are read."""
        if self.path.is_dir():
            found = sorted(p for p in self.path.rglob("*") if p.suffix.lower() == ".txt")
            if not found:
                raise InputError("directory contains no .txt files", path=self.path)
            return found
        if not self.path.exists():
            raise InputError("no such file or directory; check the path", path=self.path)
        return [self.path]

    def _scan(self) -> Iterator[tuple[str, str, Any] | InputError]:
        root = self.path if self.path.is_dir() else self.path.parent
        for file in self.files():
            doc_id = file.relative_to(root).as_posix()
            try:
                data = file.read_bytes()
            except OSError as exc:
                yield InputError(f"cannot read: {exc.strerror}", path=file)
                continue
            self.consumed += len(data)
            encoding = self.options.encoding
            if codecs.lookup(encoding).name == "utf-8":
                encoding = "utf-8-sig"  # a byte-order mark first is not part of the text
            try:
                text = data.decode(encoding)
            except UnicodeDecodeError as exc:
                yield InputError(
                    f"not valid {self.options.encoding} (byte 0x{data[exc.start]:02x} at offset "
                    f"{exc.start})"
                    + remedy(
                        encoding_hint(self.options.encoding),
                        "re-encode it as UTF-8",
                        skip_advice(),
                    ),
                    path=file,
                )
                continue
            yield doc_id, text, (doc_id, text)
