"""The local HTTP surface: one router per capability under /api/<name>/, background jobs and
their progress events, a short status page, all behind one security layer."""
