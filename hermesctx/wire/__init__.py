"""What goes on the wire: the provider request rules (:mod:`hermesctx.wire.rules`)."""
