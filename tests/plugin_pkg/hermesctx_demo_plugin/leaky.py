"""An engine whose import fails with a message quoting a key (it must be masked when printed)."""

raise ImportError("cannot reach the service with api_key=sk-proj-demo0123456789abcdefghijklmnopqrstuv")
