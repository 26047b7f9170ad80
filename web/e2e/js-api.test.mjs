// crates/schedlab-js: the example page for docs authors loads the API from
// dist/, runs a preset and round-trips a link, with the CLI's numbers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useBrowser, cli } from './harness.mjs';

const env = useBrowser();

test('the schedlab-js example page runs an experiment and round-trips a link', async () => {
  const page = await env.browser.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
  await page.goto(`${env.server.url}schedlab-js-example.html`);
  await page.waitForFunction(() => document.body.dataset.done, null, { timeout: 60_000 });
  const done = await page.evaluate(() => document.body.dataset.done);
  assert.notEqual(done, 'error', await page.textContent('#error'));
  const { presets, pinned, seed } = JSON.parse(done);
  assert.equal(presets, 18);
  assert.equal(seed, 7);
  const native = JSON.parse(cli(['run', 'kvm-pipe-test-pinning', '--format', 'json']));
  assert.equal(pinned, native.rows[0].values.pinned, 'the same number as the CLI');
  assert.equal((await page.textContent('#table')).trim(), cli(['run', 'kvm-pipe-test-pinning']).trim());
  assert.match(await page.textContent('#explanation'), /pinned woke 100% of wakees/);
  assert.deepEqual(errors, []);
  await page.close();
});
