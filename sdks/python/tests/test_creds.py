"""Credentials: parsing a .creds file, decoding the nkey seed, signing the nonce, the inbox check."""

from __future__ import annotations

import base64
import json

import nacl.signing
import pytest

from mcpgw_agent.creds import CredentialsError, crc16, decode_seed, load_creds, parse_creds

# A throwaway user key made with @nats-io/nkeys for these tests (it signs for nothing),
# and its signature of "abc-nonce" as nkeys makes it (base64url).
SEED = "SUAM6WLYIU2ZJ6GVKXYMCABPKULAL5PMYJOASXJR5T53GHIJQN2DLXBY4M"
PUBLIC = "UDE4ILS5POGVT6KATLI262TDJMILV7SGBGIR5DTK5KUS6YHOGB3NYCRN"
NKEYS_SIGNATURE = "4VufutXzo8UQOmQVhEqTktwgVpMvD4u7pI0SneukNsTbNl8xR4SgHzlslhEVMgnOFUi6wv-SUipI3Tjg-VaXCQ"
ACCOUNT_SEED = "SAAFACR5PQIKVQIHEBGY7RCWNQNZS5ZNYJFKVVNK6RMORXWRWX2UAWGT64"


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def jwt(claims: dict) -> str:
    header = b64url(json.dumps({"typ": "JWT", "alg": "ed25519-nkey"}).encode())
    return f"{header}.{b64url(json.dumps(claims).encode())}.{b64url(b'not-checked-here')}"


def creds_text(token: str, seed: str = SEED) -> str:
    return (
        "-----BEGIN NATS USER JWT-----\n"
        f"{token}\n"
        "------END NATS USER JWT------\n\n"
        "************************* IMPORTANT *************************\n"
        "NKEY Seed printed below can be used to sign and prove identity.\n\n"
        "-----BEGIN USER NKEY SEED-----\n"
        f"{seed}\n"
        "------END USER NKEY SEED------\n"
    )


def agent_claims(inbox: str = "_INBOX.mcpgw.agent.my-agent.>") -> dict:
    return {"sub": PUBLIC, "name": "agent.my-agent", "nats": {"sub": {"allow": ["mcpgw.agents.my-agent.cancel", inbox]}}}


def public_key_bytes(public: str) -> bytes:
    raw = base64.b32decode(public + "=" * (-len(public) % 8))
    return raw[1:-2]


def test_crc16_xmodem_check_value() -> None:
    assert crc16(b"123456789") == 0x31C3


def test_decodes_the_seed_to_the_key_nkeys_derives() -> None:
    seed = decode_seed(SEED)
    assert len(seed) == 32
    assert bytes(nacl.signing.SigningKey(seed).verify_key) == public_key_bytes(PUBLIC)


def test_signs_the_nonce_as_nkeys_does() -> None:
    creds = parse_creds(creds_text(jwt(agent_claims())))
    assert creds.sign("abc-nonce").decode() == NKEYS_SIGNATURE
    assert creds.sign(b"abc-nonce") == creds.sign("abc-nonce")
    # The server verifies it with the user's public key.
    nacl.signing.VerifyKey(public_key_bytes(PUBLIC)).verify(
        b"abc-nonce", base64.urlsafe_b64decode(NKEYS_SIGNATURE + "==")
    )


@pytest.mark.parametrize(
    "seed, why",
    [
        (SEED[:-1] + ("A" if SEED[-1] != "A" else "B"), "checksum"),
        (ACCOUNT_SEED, "not a user nkey seed"),
        (PUBLIC, "wrong length"),  # a public key, not a seed
        ("S" * 10, "length"),
        ("not base32!", "base32"),
    ],
)
def test_refuses_a_bad_seed(seed: str, why: str) -> None:
    with pytest.raises(CredentialsError, match=why):
        decode_seed(seed)


def test_reads_the_claims() -> None:
    creds = parse_creds(creds_text(jwt(agent_claims())))
    assert creds.sub_allow == ["mcpgw.agents.my-agent.cancel", "_INBOX.mcpgw.agent.my-agent.>"]
    assert creds.jwt.count(".") == 2


def test_the_inbox_check_takes_this_agents_credentials_only() -> None:
    creds = parse_creds(creds_text(jwt(agent_claims())))
    creds.check_inbox("_INBOX.mcpgw.agent.my-agent")
    with pytest.raises(CredentialsError, match=r"NATS_CREDS: .* not for _INBOX.mcpgw.agent.other"):
        creds.check_inbox("_INBOX.mcpgw.agent.other")
    with pytest.raises(CredentialsError, match="NATS_CREDS"):
        creds.check_inbox("_INBOX.other-prefix.agent.my-agent")
    service = parse_creds(creds_text(jwt(agent_claims("_INBOX.mcpgw.gateway.>"))))
    with pytest.raises(CredentialsError, match="_INBOX.mcpgw.gateway"):
        service.check_inbox("_INBOX.mcpgw.agent.my-agent")
    # An unrestricted user (no allow list) may use any inbox.
    parse_creds(creds_text(jwt({"sub": PUBLIC, "nats": {}}))).check_inbox("_INBOX.mcpgw.agent.my-agent")


def test_never_shows_the_seed() -> None:
    creds = parse_creds(creds_text(jwt(agent_claims())))
    assert SEED not in repr(creds) and SEED not in str(creds)


def test_refuses_what_is_not_a_creds_file(tmp_path) -> None:
    with pytest.raises(CredentialsError, match="not a NATS credentials file"):
        parse_creds("hello")
    path = tmp_path / "bad.creds"
    path.write_text(creds_text("only-one-part"))
    with pytest.raises(CredentialsError, match=f"NATS_CREDS: {path} is not usable"):
        load_creds(str(path))
    with pytest.raises(CredentialsError, match="NATS_CREDS: cannot read"):
        load_creds(str(tmp_path / "missing.creds"))


def test_load_reads_a_file(tmp_path) -> None:
    path = tmp_path / "agent.creds"
    path.write_text(creds_text(jwt(agent_claims())))
    assert load_creds(str(path)).sign("x")
