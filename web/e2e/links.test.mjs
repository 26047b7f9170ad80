// The URL is the experiment: links restore every setting, edits and runs
// write the fragment with history, bad links fall back to the last
// experiment, and embed links work inside an iframe.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useBrowser, openPage, runToEnd, screenshot, field } from './harness.mjs';

const env = useBrowser();

const experimentJson = (page) => page.textContent('#experiment-json');
/** Waits for the debounced fragment to be written. */
const hashSettles = (page, pattern) =>
  page.waitForFunction((src) => new RegExp(src).test(location.hash), pattern.source, { timeout: 5000 });

test('a preset link opens the preset; an edited one restores every setting exactly', async () => {
  const { page, errors } = await openPage(env.browser, `${env.server.url}#preset=waweight-tbench`);
  assert.equal(await page.inputValue('#preset'), 'waweight-tbench');
  await page.click(field('v1.NUMA.WAKE_AFFINE'));
  await page.fill(field('v0.tunable.sched_migration_cost_ns'), '250000');
  await page.fill(field('sweep'), '2, 8, 80');
  await hashSettles(page, /^#x=1\./);
  const url = page.url();
  const settings = await experimentJson(page);
  const { page: reopened, errors: errors2 } = await openPage(env.browser, url);
  assert.equal(await experimentJson(reopened), settings);
  assert.equal(await reopened.isChecked(field('v1.NUMA.WAKE_AFFINE')), false);
  assert.equal(await reopened.inputValue(field('sweep')), '2, 8, 80');
  assert.deepEqual([...errors, ...errors2], []);
  await page.close();
  await reopened.close();
});

test('Run makes a history entry: Back and Forward restore the experiments', async () => {
  const { page, errors } = await openPage(env.browser, `${env.server.url}#preset=kvm-pipe-test-pinning`);
  await runToEnd(page);
  await page.fill(field('seed'), '42');
  await hashSettles(page, /^#x=/);
  await runToEnd(page);
  assert.equal(await page.inputValue(field('seed')), '42');
  await page.goBack();
  await page.waitForFunction(() => location.hash === '#preset=kvm-pipe-test-pinning');
  await page.waitForFunction(() => document.querySelector('[data-field="seed"]').value === '1');
  assert.equal(await page.inputValue('#preset'), 'kvm-pipe-test-pinning');
  await page.goForward();
  await page.waitForFunction(() => document.querySelector('[data-field="seed"]').value === '42');
  assert.deepEqual(errors, []);
  await page.close();
});

test('a link can ask to run on open', async () => {
  const { page, errors } = await openPage(env.browser, `${env.server.url}#preset=kvm-pipe-test-pinning&run`);
  await page.waitForSelector('#results-table', { timeout: 60_000 });
  assert.match(await page.textContent('#results-table'), /pinned\s+free/);
  assert.deepEqual(errors, []);
  await page.close();
});

test('bad links open the last experiment with a clear message, and nothing crashes', async () => {
  const context = await env.browser.newContext();
  // The user's last experiment (seed 5), kept in localStorage; its link, cut in half, is one bad link.
  const { page: first } = await openPage(env.browser, `${env.server.url}#preset=waweight-tbench`, { context });
  await first.fill(field('seed'), '5');
  await hashSettles(first, /^#x=/);
  const code = new URL(first.url()).hash.slice('#x='.length);
  await first.close();
  // Viewing an embedded experiment does not replace it.
  const { page: embedded } = await openPage(env.browser, `${env.server.url}?embed#preset=retune-lat-ctx`, { context });
  await embedded.waitForTimeout(600);
  await embedded.close();
  const bad = {
    corrupted: '#x=1.AAAAbroken',
    truncated: `#x=${code.slice(0, Math.floor(code.length / 2))}`,
    'unknown version': '#x=7.abc',
    '100 KB': `#x=1.${'A'.repeat(100_000)}`,
    'over the limits': `#${encodeURIComponent(JSON.stringify({
      version: 1, name: 'too big', machine: 'kvm-2vcpu', policy: { era: '6.5' },
      variants: [{ label: 'A' }], workload: { kind: 'pipe_test' }, repeats: 100000,
    }))}`,
  };
  for (const [what, fragment] of Object.entries(bad)) {
    const { page, errors } = await openPage(env.browser, `${env.server.url}${fragment}`, { context });
    const notice = await page.textContent('#notice');
    assert.match(notice, /This link could not be opened: .+\. Showing your last experiment instead\./, what);
    assert.equal(await page.inputValue(field('seed')), '5', `${what}: the last experiment opens`);
    assert.deepEqual(errors, [], what);
    if (what === '100 KB') assert.match(notice, /the limit is 65536/);
    if (what === 'over the limits') assert.match(notice, /repeats/);
    if (what === 'unknown version') assert.match(notice, /version "7" is not known/);
    await page.close();
  }
  // With nothing kept, a bad link opens the default experiment.
  const fresh = await env.browser.newContext();
  const { page, errors } = await openPage(env.browser, `${env.server.url}#x=1.AAAA`, { context: fresh });
  assert.match(await page.textContent('#notice'), /could not be opened/);
  assert.equal(await page.inputValue('#preset'), 'eevdf-rtapp-desktop');
  assert.deepEqual(errors, []);
  await fresh.close();
  await context.close();
});

test('Copy link, and embed mode inside an iframe from the copied snippet, opening the full playground', async () => {
  const context = await env.browser.newContext();
  await context.grantPermissions(['clipboard-read', 'clipboard-write']);
  const { page, errors } = await openPage(env.browser, `${env.server.url}#preset=retune-lat-ctx`, { context });
  await page.fill(field('seed'), '3');
  await hashSettles(page, /^#x=/);
  const settings = await experimentJson(page);
  await page.click('#copy-link');
  const link = await page.evaluate(() => navigator.clipboard.readText());
  assert.equal(link, page.url(), 'Copy link copies the URL with the experiment');
  await page.click('#copy-iframe');
  const snippet = await page.evaluate(() => navigator.clipboard.readText());
  assert.match(snippet, /^<iframe src="http:\/\/127\.0\.0\.1:\d+\/schedlab\/\?embed#x=1\./);
  const host = await context.newPage();
  await host.setContent(`<!doctype html><h1>A docs page</h1>${snippet}`);
  const frame = host.frameLocator('iframe');
  await frame.locator('#app[data-ready="true"]').waitFor();
  assert.equal(await frame.locator('.panel').count(), 0, 'embed shows no editing panels');
  await frame.locator('button#run').click();
  await frame.locator('#results-table').waitFor({ timeout: 60_000 });
  assert.match(await frame.locator('#results-table').textContent(), /2\.6\.27\s+2\.6\.28/);
  await screenshot(host, 'embed-in-iframe');
  const full = await frame.locator('#open-full').getAttribute('href');
  const { page: opened, errors: errors2 } = await openPage(env.browser, full, { context });
  assert.equal(await experimentJson(opened), settings, 'the full playground has identical settings');
  assert.deepEqual([...errors, ...errors2], []);
  await context.close();
});
