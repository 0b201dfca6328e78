"""Context handoff (graft-slice): when to hand off, what the new session gets, command risk."""
