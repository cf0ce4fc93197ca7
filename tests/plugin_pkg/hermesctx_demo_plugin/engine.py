"""Engine ``keep-last``: keeps the leading system message and everything from the latest user
message on, and says in the system prompt how many messages it dropped. ``raises``: fails."""

from __future__ import annotations


class KeepLastEngine:
    def compress(self, messages, context):
        head = messages[:1] if messages and messages[0].get("role") == "system" else []
        last = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=len(head))
        dropped = max(last - len(head), 0)
        if not dropped:
            return messages
        note = f"\n\n[keep-last engine dropped {dropped} messages; window {context.context_length}]"
        head = [{**head[0], "content": head[0]["content"] + note}] if head else []
        return head + messages[last:], {"dropped": dropped}


class RaisingEngine:
    def compress(self, messages, context):
        raise RuntimeError("the demo engine always fails")


class ExitingEngine:
    def compress(self, messages, context):
        import sys

        sys.exit(0)


class HangingEngine:
    def compress(self, messages, context):
        import time

        time.sleep(3600)
