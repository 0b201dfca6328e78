"""What the tests and the benchmarks share: paths, log writers, fake servers, the graft world,
the `dshkit` process helper. Kept light: a hook process imports `tests.support.hook_handlers`."""
