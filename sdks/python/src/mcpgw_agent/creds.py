"""NATS ``.creds`` files: the user JWT, the nkey seed, and signing the server's nonce.

nats-py signs with the ``nkeys`` package, which is not a dependency here: the
seed is decoded by hand (base32, the nkeys layout) and the nonce is signed
with PyNaCl's ed25519, which is what nkeys does.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from dataclasses import dataclass
from typing import Any

import nacl.signing

from .json_values import as_list, as_object

__all__ = ["Credentials", "CredentialsError", "parse_creds", "load_creds", "decode_seed", "crc16"]


class CredentialsError(Exception):
    """The credentials cannot be used (unreadable, malformed, another agent's)."""


_JWT_BLOCK = re.compile(r"-----BEGIN NATS USER JWT-----\s*([^\s-][^\s]*)\s*-")
_SEED_BLOCK = re.compile(r"-----BEGIN USER NKEY SEED-----\s*([^\s-][^\s]*)\s*-")

# nkeys prefix bytes (the first base32 character of the encoded key).
_PREFIX_SEED = 18 << 3  # 'S'
_PREFIX_USER = 20 << 3  # 'U'


def crc16(data: bytes) -> int:
    """CRC-16/XMODEM (polynomial 0x1021, initial 0), as nkeys appends to every encoded key."""
    crc = 0
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else (crc << 1)
            crc &= 0xFFFF
    return crc


def decode_seed(seed: str) -> bytes:
    """The 32-byte ed25519 seed of an encoded user nkey seed (``SU…``); checks its prefix and checksum."""
    text = seed.strip()
    try:
        raw = base64.b32decode(text + "=" * (-len(text) % 8))
    except (binascii.Error, ValueError) as error:
        raise CredentialsError("the nkey seed is not base32") from error
    if len(raw) != 2 + 32 + 2:
        raise CredentialsError("the nkey seed has the wrong length")
    body, checksum = raw[:-2], int.from_bytes(raw[-2:], "little")
    if crc16(body) != checksum:
        raise CredentialsError("the nkey seed's checksum does not match")
    if body[0] & 0xF8 != _PREFIX_SEED:
        raise CredentialsError("not an nkey seed")
    kind = ((body[0] & 0x07) << 5) | ((body[1] & 0xF8) >> 3)
    if kind != _PREFIX_USER:
        raise CredentialsError("not a user nkey seed")
    return bytes(body[2:])


def _jwt_claims(jwt: str) -> dict[str, Any]:
    parts = jwt.split(".")
    if len(parts) != 3:
        raise CredentialsError("the user JWT is malformed")
    payload = parts[1]
    try:
        claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    except (binascii.Error, ValueError) as error:
        raise CredentialsError("the user JWT is malformed") from error
    checked = as_object(claims)
    if checked is None:
        raise CredentialsError("the user JWT is malformed")
    return checked


@dataclass(frozen=True)
class Credentials:
    """A user JWT and the seed that signs for it."""

    jwt: str
    seed: bytes
    claims: dict[str, Any]

    @property
    def sub_allow(self) -> list[str]:
        """The subjects the user may subscribe to (empty: no allow list, anything)."""
        nats_claims = as_object(self.claims.get("nats"))
        sub = as_object(nats_claims.get("sub")) if nats_claims is not None else None
        allow = as_list(sub.get("allow")) if sub is not None else None
        return [s for s in allow if isinstance(s, str)] if allow is not None else []

    def sign(self, nonce: str | bytes) -> bytes:
        """The server's nonce signed with the seed, base64url without padding (what ``sig`` carries)."""
        data = nonce.encode() if isinstance(nonce, str) else nonce
        signature = nacl.signing.SigningKey(self.seed).sign(data).signature
        return base64.urlsafe_b64encode(signature).rstrip(b"=")

    def public_key(self) -> bytes:
        """The raw ed25519 public key (for tests)."""
        return bytes(nacl.signing.SigningKey(self.seed).verify_key)

    def check_inbox(self, inbox_prefix: str, path: str = "NATS_CREDS") -> None:
        """Refuse credentials whose private reply inbox is not ``inbox_prefix`` (another agent's, a service's)."""
        allowed = self.sub_allow
        theirs = next((s for s in allowed if s.startswith("_INBOX.")), None)
        if allowed and theirs != f"{inbox_prefix}.>":
            raise CredentialsError(
                f"NATS_CREDS: {path} holds credentials for {theirs or 'no reply inbox'}, not for {inbox_prefix}"
            )

    def __repr__(self) -> str:  # never print the seed
        return f"Credentials(sub={self.claims.get('sub')!r}, name={self.claims.get('name')!r})"


def parse_creds(text: str) -> Credentials:
    """Parse the text of a ``.creds`` file."""
    jwt = _JWT_BLOCK.search(text)
    seed = _SEED_BLOCK.search(text)
    if not jwt or not seed:
        raise CredentialsError("not a NATS credentials file")
    return Credentials(jwt=jwt.group(1), seed=decode_seed(seed.group(1)), claims=_jwt_claims(jwt.group(1)))


def load_creds(path: str) -> Credentials:
    """Read and parse a ``.creds`` file; errors name the file (``NATS_CREDS: …``), never its contents."""
    try:
        with open(path, encoding="utf-8") as file:
            text = file.read()
    except OSError as error:
        raise CredentialsError(f"NATS_CREDS: cannot read {path} ({error.strerror or 'unreadable'})") from error
    try:
        return parse_creds(text)
    except CredentialsError as error:
        raise CredentialsError(f"NATS_CREDS: {path} is not usable: {error}") from error
