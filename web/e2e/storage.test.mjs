// The page and the browser's storage (localStorage) at its worst: a corrupt
// history, a corrupt last experiment, storage disabled, storage full. The
// page loads, says what happened, runs, and loses nothing it could keep.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useBrowser, openPage, runToEnd, screenshot } from './harness.mjs';

const env = useBrowser();

/** A context whose localStorage starts as `items` (set before any page script). */
async function contextWith(items, init) {
  const context = await env.browser.newContext();
  await context.addInitScript(([items, once]) => {
    if (sessionStorage.getItem(once)) return; // only the first load of the tab
    sessionStorage.setItem(once, '1');
    for (const [k, v] of Object.entries(items)) localStorage.setItem(k, v);
  }, [items, `seeded-${Math.random()}`]);
  if (init) await context.addInitScript(init);
  return context;
}

/** The history one real run leaves, as stored. */
async function oneRunHistory() {
  const context = await env.browser.newContext();
  const { page, errors } = await openPage(env.browser, `${env.server.url}#preset=kvm-pipe-test-pinning`, { context });
  await runToEnd(page);
  await page.waitForFunction(() => localStorage.getItem('schedlab.history'));
  const history = await page.evaluate(() => localStorage.getItem('schedlab.history'));
  assert.deepEqual(errors, []);
  await context.close();
  return JSON.parse(history);
}

test('a corrupt history: the readable runs stay listed, the rest is set aside and said', async () => {
  const [run] = await oneRunHistory();
  const broken = { ...run, id: 2, experiment: 'not an experiment' };
  const third = { ...run, id: 3 };
  const context = await contextWith({ 'schedlab.history': JSON.stringify([run, broken, third]) });
  const { page, errors } = await openPage(env.browser, env.server.url, { context });
  assert.match(await page.textContent('#storage-trouble'), /^1 of the 3 runs kept in this browser could not be read \(run 2 of the list: .+\); they are set aside in localStorage under "schedlab\.history\.unreadable"/);
  assert.deepEqual(await page.$$eval('#history li', (li) => li.map((l) => l.dataset.run)), ['3', '1']);
  const stored = await page.evaluate(() => [localStorage.getItem('schedlab.history'), localStorage.getItem('schedlab.history.unreadable')]);
  assert.deepEqual(JSON.parse(stored[0]).map((r) => r.id), [1, 3]);
  assert.deepEqual(JSON.parse(stored[1]).map((t) => JSON.parse(t).id), [2], 'the unreadable run is kept, as it was');
  await screenshot(page, 'storage-corrupt', { fullPage: false });
  // A run still works and is kept beside the others.
  await runToEnd(page);
  await page.waitForSelector('#history li[data-run="4"]');
  assert.deepEqual(errors, []);
  await context.close();
});

test('a history that is not JSON, and a last experiment that no longer reads', async () => {
  const context = await contextWith({ 'schedlab.history': '[{"id":1,"when":', 'schedlab.last': '9.garbage' });
  const { page, errors } = await openPage(env.browser, env.server.url, { context });
  assert.match(await page.textContent('#storage-trouble'), /^The runs kept in this browser could not be read \(not a JSON list of runs: .+\); they are set aside/);
  assert.match(await page.textContent('.notice'), /Your last experiment, kept in this browser, could not be read \(.+\); it is set aside in localStorage under "schedlab\.last\.unreadable"\. Showing the default experiment\./);
  const aside = await page.evaluate(() => [localStorage.getItem('schedlab.history.unreadable'), localStorage.getItem('schedlab.last.unreadable')]);
  assert.deepEqual(JSON.parse(aside[0]), ['[{"id":1,"when":']);
  assert.equal(aside[1], '9.garbage');
  assert.deepEqual(errors, []);
  await context.close();
});

test('storage disabled: the page loads, says so, and runs', async () => {
  const context = await env.browser.newContext();
  await context.addInitScript(() => {
    Object.defineProperty(window, 'localStorage', {
      get() { throw new DOMException('The operation is insecure.', 'SecurityError'); },
    });
  });
  const { page, errors } = await openPage(env.browser, `${env.server.url}#preset=kvm-pipe-test-pinning`, { context });
  assert.match(await page.textContent('#storage-trouble'), /keeps no storage for this page/);
  const results = await runToEnd(page);
  assert.ok(results.rows.length > 0);
  assert.match(await page.textContent('#storage-trouble'), /keeps no storage for this page/);
  assert.deepEqual(errors, []);
  await context.close();
});

test('storage full: a run that cannot be kept says so, and what was kept stays', async () => {
  const [run] = await oneRunHistory();
  const context = await contextWith({ 'schedlab.history': JSON.stringify([run]) }, () => {
    // A quota that the kept run fills: any larger history is refused.
    const quota = (localStorage.getItem('schedlab.history') ?? '').length + 100;
    const setItem = Storage.prototype.setItem;
    Storage.prototype.setItem = function (key, value) {
      if (key === 'schedlab.history' && value.length > quota) {
        throw new DOMException('The quota has been exceeded.', 'QuotaExceededError');
      }
      return setItem.call(this, key, value);
    };
  });
  const { page, errors } = await openPage(env.browser, `${env.server.url}#preset=retune-lat-ctx`, { context });
  await runToEnd(page);
  await page.waitForSelector('#storage-trouble');
  assert.match(await page.textContent('#storage-trouble'), /storage is full/);
  assert.ok(await page.$('#results-table'), 'the results are on the page');
  const kept = await page.evaluate(() => JSON.parse(localStorage.getItem('schedlab.history')));
  assert.equal(kept.length, 1, 'one run fits');
  assert.deepEqual(errors, []);
  await context.close();
});
