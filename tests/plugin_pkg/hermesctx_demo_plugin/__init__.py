"""A demo hermesctx plugin (tests only): a stage, a summarizer and a context engine."""
