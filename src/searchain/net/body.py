"""Response bodies from untrusted servers: read up to a byte cap (compressed ones too), and
decoded only in charsets with linear-time codecs."""

from __future__ import annotations

import codecs
import zlib


class BodyError(RuntimeError):
    """The body cannot be decoded (invalid compressed data)."""


# Charsets a page may name, as Python codec names: single-byte tables and the common
# multi-byte ones, all decoded in linear time by C codecs. Anything else ("punycode",
# "idna", "utf-7", "rot13", "zlib"...: slow, or not text codecs at all) decodes as UTF-8.
CHARSETS = frozenset(
    """
    utf-8 utf-8-sig ascii iso8859-1 iso8859-2 iso8859-15 cp1250 cp1251 cp1252 cp1253 cp1254
    cp1256 koi8-r utf-16 utf-16-le utf-16-be utf-32 utf-32-le utf-32-be shift_jis euc_jp
    iso2022_jp gb2312 gbk gb18030 big5 euc_kr cp949
    """.split()
)


def decode(content: bytes, content_type: str) -> str:
    """A body as text in the charset its ``Content-Type`` names, if that one is allowed
    (:data:`CHARSETS`), else UTF-8; undecodable bytes become U+FFFD."""
    charset = "utf-8"
    for part in content_type.split(";")[1:]:
        key, _, value = part.strip().partition("=")
        if key.lower() == "charset" and value:
            try:
                name = codecs.lookup(value.strip("\"' ")).name
            except LookupError:
                continue
            if name in CHARSETS:
                charset = name
    return content.decode(charset, errors="replace")


class Body:
    """Accumulates (and decodes) a body up to the byte cap."""

    def __init__(self, encoding: str, cap: int) -> None:
        self.cap, self.size, self.truncated = cap, 0, False
        self.parts: list[bytes] = []
        self.decoder = None
        if encoding in ("gzip", "x-gzip", "deflate"):
            self.decoder = zlib.decompressobj(zlib.MAX_WBITS | 32)  # auto-detect gzip/zlib

    def feed(self, chunk: bytes) -> bool:
        """Add a chunk; False once the cap is reached (stop reading)."""
        room = self.cap - self.size
        if self.decoder is not None:
            try:
                chunk = self.decoder.decompress(chunk, room + 1)
            except zlib.error:
                raise BodyError("response body is not valid compressed data") from None
        if len(chunk) > room:
            chunk, self.truncated = chunk[:room], True
        self.parts.append(chunk)
        self.size += len(chunk)
        return not self.truncated

    def content(self) -> bytes:
        return b"".join(self.parts)
