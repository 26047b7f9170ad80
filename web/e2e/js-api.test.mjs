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
  assert.equal(presets, 20);
  assert.equal(seed, 7);
  const native = JSON.parse(cli(['run', 'kvm-pipe-test-pinning', '--format', 'json']));
  assert.equal(pinned, native.rows[0].values.pinned, 'the same number as the CLI');
  assert.equal((await page.textContent('#table')).trim(), cli(['run', 'kvm-pipe-test-pinning']).trim());
  assert.match(await page.textContent('#explanation'), /pinned woke 100% of wakees/);
  assert.deepEqual(errors, []);
  await page.close();
});

// The engine's speed in the browser beside the CLI's, on the same cases:
// the events must match (the same runs); the rates are printed, not judged.
test('schedlab-js bench runs the CLI bench cases with the same events', async () => {
  const page = await env.browser.newPage();
  await page.goto(`${env.server.url}schedlab-js-example.html`);
  await page.waitForFunction(() => document.body.dataset.done, null, { timeout: 60_000 });
  const lines = await page.evaluate(async () => {
    const m = await import('./schedlab-js.js');
    await m.default();
    return m.bench(['retune-pipe-test.v1', 'kvm-pipe-test-pinning.v1']);
  });
  const native = cli(['bench']).split('\n').slice(1).filter(Boolean).map((l) => l.trim().split(/\s+/));
  for (const line of lines) {
    const row = native.find((r) => r[0] === line.case);
    assert.ok(row, `the CLI benches ${line.case}`);
    assert.equal(line.events, Number(row[1]), `${line.case}: the same events as the CLI`);
    assert.ok(line.wall_ms > 0);
    assert.ok(line.sim_ms > 0, `${line.case}: simulated time measured`);
    console.log(`bench ${line.case}: browser ${(line.events / line.wall_ms / 1000).toFixed(2)} M events/s, ` +
      `CLI (debug build) ${row[3]} M events/s`);
  }
  await page.close();
});

// Errors are JS Errors named SchedlabError with the part of the input they
// concern, so a docs page can tell a bad link from a bad machine.
test('schedlab-js throws errors that say which part of the input was wrong', async () => {
  const page = await env.browser.newPage();
  await page.goto(`${env.server.url}schedlab-js-example.html`);
  await page.waitForFunction(() => document.body.dataset.done, null, { timeout: 60_000 });
  const caught = await page.evaluate(async () => {
    const m = await import('./schedlab-js.js');
    await m.default();
    const tryIt = (f) => {
      try {
        f();
        return null;
      } catch (e) {
        return { name: e.name, concern: e.concern, message: e.message, isError: e instanceof Error };
      }
    };
    const exp = m.decodeLink('preset=kvm-pipe-test-pinning');
    return {
      link: tryIt(() => m.decodeLink('x=1.broken')),
      machine: tryIt(() => m.encodeLink({ ...exp, machine: 'no-such-machine' })),
      experiment: tryIt(() => m.runExperiment({ ...exp, variants: [] })),
    };
  });
  for (const [concern, e] of Object.entries(caught)) {
    assert.ok(e, `${concern}: an error was thrown`);
    assert.equal(e.isError, true);
    assert.equal(e.name, 'SchedlabError');
    assert.equal(e.concern, concern, `${concern}: ${e.message}`);
    assert.ok(e.message.length > 10, e.message);
  }
  await page.close();
});
