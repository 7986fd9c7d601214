"""An attachment's bytes, through its signed URL (``Context.download``): http(s) only, bounded in size."""

from __future__ import annotations

from ..results import ToolError

__all__ = ["download"]


async def download(url: str, max_bytes: int) -> bytes:
    """The bytes at ``url``; a ``ToolError`` for another scheme or more than ``max_bytes``."""
    import httpx

    if not url.lower().startswith(("http://", "https://")):
        raise ToolError("an attachment is downloaded over http(s) only")
    async with httpx.AsyncClient(timeout=30.0, follow_redirects=False) as client:
        async with client.stream("GET", url) as response:
            response.raise_for_status()
            chunks: list[bytes] = []
            size = 0
            async for chunk in response.aiter_bytes():
                size += len(chunk)
                if size > max_bytes:
                    raise ToolError(f"the attachment is larger than {max_bytes} bytes")
                chunks.append(chunk)
            return b"".join(chunks)
