"""The one-pass checks of a message list (:func:`one_pass`): each rule's cheap "might apply"
test asked of every message once, by role and kind of message, the state a test needs carried
in a :class:`Walk`. The send path's rule tables (:mod:`hermesctx.wire.send`) and the pairing
rule's pre-check (:func:`hermesctx.wire.rules.openai_pairs_clean`) are built on it; a module of
its own so that the send path does not import every rule of :mod:`hermesctx.wire.rules`."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any


class Walk:
    """What a one-pass check carries from message to message (:func:`one_pass`): the role of
    the message before, the ids of the open assistant's calls not answered yet (``pending``,
    the pairing rule's) and those a result may still answer (``known``, the send path's)."""

    __slots__ = ("prev_role", "pending", "known")

    def __init__(self) -> None:
        self.prev_role: Any = None
        self.pending: set = set()
        self.known: set = set()


# what a one-pass test may be asked of only (:func:`by_role`): a message with a key beyond the plain
# ones, one whose content is a list, one with calls (``tool_calls`` not null)
KEYED, LISTED, CALLED = 1, 2, 4


def by_role(tests: Iterable[tuple], plain: frozenset = frozenset()) -> tuple:
    """One-pass tests as :func:`one_pass` takes them, from ``(test, roles)`` or ``(test, roles,
    only)`` (``roles`` None: every message; ``only``: :data:`KEYED`, :data:`LISTED` or
    :data:`CALLED`, asked only of such a message; a key is plain when ``plain`` holds it): for
    each role named, and for any other role, the tests of each kind of message, in their order."""
    rows = [(t[0], t[1], t[2] if len(t) > 2 else 0) for t in tests]

    def of(role: Any) -> tuple[tuple, ...]:
        asked = [(test, only) for test, roles, only in rows if roles is None or role in roles]
        return tuple(tuple(test for test, only in asked if not only or only & kind) for kind in range(8))

    return {role: of(role) for _, roles, _ in rows for role in roles or ()}, of(None), plain


def one_pass(messages: list, tests: tuple, *, odd_ok: bool = False) -> bool:
    """True when no test says its rule might apply to any message of ``messages`` (``tests``
    from :func:`by_role`; each ``test(msg, role, walk) -> bool`` is True whenever its rule might
    apply, so False is a promise; a test that carries state in the :class:`Walk` advances it as
    it looks) and no call is left unanswered. A message that is not an object makes it False,
    unless ``odd_ok`` (a check that words such a message elsewhere): then the tests see an
    empty one."""
    named, others, plain = tests
    walk = Walk()
    for msg in messages:
        if type(msg) is not dict:
            if not odd_ok:
                return False
            msg = {}
        role = msg.get("role")
        kind = (0 if plain.issuperset(msg) else KEYED) | (LISTED if type(msg.get("content")) is list else 0) \
            | (0 if msg.get("tool_calls") is None else CALLED)
        for test in (named.get(role, others) if type(role) is str else others)[kind]:
            if test(msg, role, walk):
                return False
        walk.prev_role = role
    return not walk.pending


def answers(msg: dict, ids: set) -> bool:
    """Whether a tool message answers one of ``ids`` (a string id), taken from them if so."""
    cid = msg.get("tool_call_id")
    if type(cid) is not str or cid not in ids:
        return False
    ids.remove(cid)
    return True


def oa_unpaired(msg: dict, role: Any, walk: Walk) -> bool:
    """The OpenAI pairing rule (OA-TOOL-*, :func:`hermesctx.wire.rules._openai_pairing`) as a
    one-pass test: the run of tool messages right after an assistant's calls answers each of
    its (string, distinct) ids once; no tool message stands anywhere else. True also for any
    odd id."""
    pending = walk.pending
    if role == "tool":
        return not answers(msg, pending)
    if pending:
        return True
    if role != "assistant":
        return False
    calls = msg.get("tool_calls")
    if calls is None or type(calls) is not list:
        return False
    if not calls:
        return True
    for call in calls:
        cid = call.get("id") if type(call) is dict else None
        if type(cid) is not str or cid in pending:
            return True
        pending.add(cid)
    return False
