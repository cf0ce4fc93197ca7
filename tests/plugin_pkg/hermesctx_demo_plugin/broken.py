"""An engine whose module cannot be imported."""

import hermesctx_demo_plugin_missing_dependency  # noqa: F401

Engine = None
