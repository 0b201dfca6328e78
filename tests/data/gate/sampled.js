// Test pages' deterministic trigger: `afterSamples(n, fn)` runs `fn` once the delivery gate
// has wholly taken `n` more samples of the page (when it reads the next one: each sample
// reads the gate's list of WebGL failures once), so each of those `n` saw the page, and the
// judge took it in, as it was before `fn`. Opened outside the gate, `fn` runs after n × 250 ms.
window.afterSamples = (() => {
  const gate = window.__dshkitGate;
  if (!gate) return (n, fn) => setTimeout(fn, n * 250);
  const waiting = [], failures = gate.failures;
  let taken = 0;
  Object.defineProperty(gate, 'failures', {
    configurable: true,
    get() {
      taken += 1;
      for (const wait of waiting.filter((w) => w.at === taken)) setTimeout(wait.fn, 0);
      return failures;
    },
  });
  return (n, fn) => { waiting.push({ at: taken + n + 1, fn }); };
})();
