// Every preset run in the page as a person runs it (open its link, click
// Run) with two Web Workers, as on the 2-core machines this is measured on:
// the results must be the CLI's, byte for byte; the page time of each is
// printed for the performance notes (docs/perf/README.md), not judged here
// (the machines are shared and noisy). The page's budget is 10 s a preset.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useBrowser, openPage, runToEnd, cli } from './harness.mjs';

const env = useBrowser();

test('every preset runs in the page with the CLI\'s numbers; each page time printed', { timeout: 900_000 }, async () => {
  const names = cli(['presets']).split('\n').filter((l) => l && !l.startsWith(' '));
  assert.ok(names.length >= 18, names.join(', '));
  const lines = [];
  for (const name of names) {
    const { page, errors } = await openPage(env.browser, `${env.server.url}#preset=${name}`, { cores: 2 });
    const start = Date.now();
    const results = await runToEnd(page, { timeout: 300_000 });
    const secs = (Date.now() - start) / 1000;
    const native = JSON.parse(cli(['run', name, '--format', 'json']));
    assert.deepEqual(results, native, `${name}: the page's results are the CLI's`);
    assert.deepEqual(errors, [], name);
    lines.push(`${name.padEnd(32)} ${secs.toFixed(1).padStart(6)} s${secs > 10 ? '  (over the 10 s budget)' : ''}`);
    await page.close();
  }
  console.log(`page time per preset, 2 workers:\n${lines.join('\n')}`);
});
