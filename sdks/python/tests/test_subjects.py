"""Subject names and the guards on subjects that come from outside."""

from __future__ import annotations

import pytest

from mcpgw_agent.subjects import POD_ID_PATTERN, Subjects, safe_name, subject_of_shape


def test_subject_of_shape() -> None:
    assert subject_of_shape("$JS.ACK.S.agent_a.1.2.3.4.5", "$JS.ACK.S.agent_a.*.*.*.*.*")
    assert not subject_of_shape("$JS.ACK.S.agent_a.1 x y.2.3.4.5", "$JS.ACK.S.agent_a.*.*.*.*.*")
    assert not subject_of_shape("$JS.ACK.S.agent_b.1.2.3.4.5", "$JS.ACK.S.agent_a.*.*.*.*.*")
    assert not subject_of_shape("$JS.ACK.S.agent_a.1.2.3.4", "$JS.ACK.S.agent_a.*.*.*.*.*")
    assert not subject_of_shape("$JS.ACK.S.agent_a.1.2.3.4.5.6", "$JS.ACK.S.agent_a.*.*.*.*.*")
    assert subject_of_shape("_INBOX.p.agent.a.Xy.1", "_INBOX.p.agent.a.>")
    assert not subject_of_shape("_INBOX.p.agent.a", "_INBOX.p.agent.a.>")


@pytest.mark.parametrize(
    "subject",
    [
        "mcpgw.ms.replicas.r1.replies.my-agent",
        "mcpgw.ms.replicas.message-service-1_x.replies.my-agent",
    ],
)
def test_takes_a_replica_replies_subject_of_this_agent(subject: str) -> None:
    assert Subjects("mcpgw", "my-agent").valid_reply_to(subject)


@pytest.mark.parametrize(
    "subject",
    [
        "mcpgw.ms.replicas.*.replies.my-agent",  # a wildcard
        "mcpgw.ms.replicas.>.replies.my-agent",
        "mcpgw.ms.replicas.r1.replies.other-agent",  # another agent's
        "mcpgw.ms.replicas.r1.replies.my-agent.more",
        "mcpgw.ms.replicas.r 1.replies.my-agent",  # whitespace would add PUB arguments
        "mcpgw.ms.replicas.r1\r\n.replies.my-agent",
        "mcpgw.ms.replicas..replies.my-agent",  # an empty token
        "other.ms.replicas.r1.replies.my-agent",  # another prefix
        "$JS.API.STREAM.PURGE.MCPGW_AGENT_INBOX",
        "mcpgw.ms.agents.my-agent.replies",
        "",
        None,
        42,
        "mcpgw.ms.replicas." + "r" * 600 + ".replies.my-agent",
        "mcpgw.ms.replicas.ré.replies.my-agent",  # not ASCII
    ],
)
def test_refuses_any_other_reply_subject(subject: object) -> None:
    assert not Subjects("mcpgw", "my-agent").valid_reply_to(subject)


def test_ack_subject_shape() -> None:
    subjects = Subjects("mcpgw", "my-agent")
    assert subjects.valid_ack("$JS.ACK.MCPGW_AGENT_INBOX.agent_my-agent.1.20.3.1700000000000000000.0")
    assert not subjects.valid_ack("$JS.ACK.MCPGW_AGENT_INBOX.agent_other.1.20.3.1700000000000000000.0")
    assert not subjects.valid_ack("$JS.ACK.MCPGW_AGENT_INBOX.agent_my-agent.*.20.3.1.0")
    assert not subjects.valid_ack("$JS.ACK.OTHER.agent_my-agent.1.20.3.1.0")
    assert not subjects.valid_ack(None)


def test_names() -> None:
    s = Subjects("test_run-1", "my-agent")
    assert s.inbox_prefix == "_INBOX.test_run-1.agent.my-agent"
    assert s.register == "test_run-1.registry.agents.my-agent.register"
    assert s.store_reply == "test_run-1.ms.agents.my-agent.replies"
    assert s.history == "test_run-1.ms.agents.my-agent.history"
    assert s.answered == "test_run-1.ms.agents.my-agent.answered"
    assert s.cancel == "test_run-1.agents.my-agent.cancel"
    assert s.notices == "test_run-1.agents.my-agent.notices"
    assert s.inbox == "test_run-1.agents.my-agent.inbox"
    assert s.events("m1") == "test_run-1.calls.my-agent.m1.events"
    assert s.input("m1") == "test_run-1.calls.my-agent.m1.input"
    assert s.stream == "TEST_RUN-1_AGENT_INBOX"
    assert s.consumer == "agent_my-agent"
    assert safe_name("a.b c") == "a_b_c"


@pytest.mark.parametrize("agent_id", ["", "-x", "a.b", "a*", "a b", "x" * 65])
def test_refuses_a_bad_agent_id(agent_id: str) -> None:
    with pytest.raises(ValueError):
        Subjects("mcpgw", agent_id)


@pytest.mark.parametrize("prefix", ["", "a b", "a.*", "a..b"])
def test_refuses_a_bad_prefix(prefix: str) -> None:
    with pytest.raises(ValueError):
        Subjects(prefix, "my-agent")


def test_presence_subject_names_the_agent() -> None:
    assert Subjects("mcpgw", "my-agent").presence == "mcpgw.agents.my-agent.presence"


def test_pod_ids_keep_to_the_contract_alphabet() -> None:
    assert POD_ID_PATTERN.match("host.local-123")
    assert POD_ID_PATTERN.match("p" * 200)
    for bad in ["", "p" * 201, ".x", "a b", "a*b", "a\nb"]:
        assert not POD_ID_PATTERN.match(bad), bad
