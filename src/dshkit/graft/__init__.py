"""Context handoff (graft-slice): when to hand off, and what the new session gets."""
