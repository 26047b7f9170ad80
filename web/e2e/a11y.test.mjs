// Accessible: axe-core finds no serious or critical violation on the main
// page, with results, in embed mode and with the help open; every control
// is reached and worked from the keyboard, with focus visible; each chart
// has a text alternative.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useBrowser, openPage, runToEnd, axeViolations } from './harness.mjs';

const env = useBrowser();

test('axe: the main page, with results, and with the help open', async () => {
  const { page, errors } = await openPage(env.browser, `${env.server.url}#preset=waweight-tbench`);
  assert.deepEqual(await axeViolations(page), [], 'main page');
  await page.fill('[data-field="workload.duration_ms"]', '20');
  await page.fill('[data-field="workload.warmup_ms"]', '5');
  await runToEnd(page);
  for (const d of await page.$$('#results details')) await d.evaluate((e) => { e.open = true; });
  assert.deepEqual(await axeViolations(page), [], 'with results');
  await page.keyboard.press('?');
  await page.waitForSelector('#help');
  assert.deepEqual(await axeViolations(page), [], 'help open');
  for (const scheme of ['dark']) {
    await page.emulateMedia({ colorScheme: scheme });
    await page.keyboard.press('Escape');
    assert.deepEqual(await axeViolations(page), [], scheme);
  }
  assert.deepEqual(errors, []);
  await page.close();
});

test('axe: embed mode', async () => {
  const { page, errors } = await openPage(env.browser, `${env.server.url}?embed#preset=kvm-pipe-test-pinning`);
  assert.deepEqual(await axeViolations(page), [], 'embed before a run');
  await page.click('button#run');
  await page.waitForSelector('#results-table', { timeout: 60_000 });
  assert.deepEqual(await axeViolations(page), [], 'embed with results');
  assert.deepEqual(errors, []);
  await page.close();
});

test('every control is reached by Tab with its focus visible; Run works from the keyboard; charts have text', async () => {
  const { page, errors } = await openPage(env.browser, `${env.server.url}#preset=kvm-pipe-test-pinning`);
  await runToEnd(page);
  // Every enabled control outside closed details can be reached by Tab.
  const controls = await page.$$eval(
    'button:not([disabled]), input:not([disabled]), select:not([disabled]), summary, a[href], [tabindex="0"]',
    (els) => els.filter((e) => e.getClientRects().length > 0 && !e.closest('details:not([open]) > :not(summary)'))
      .map((e, i) => { e.dataset.a11yId = String(i); return String(i); }),
  );
  const reached = new Set();
  const invisible = [];
  await page.evaluate(() => document.activeElement?.blur());
  for (let i = 0; i < controls.length + 20; i++) {
    await page.keyboard.press('Tab');
    const info = await page.evaluate(() => {
      const e = document.activeElement;
      if (!e || e === document.body) return null;
      const s = getComputedStyle(e);
      const inSvg = e.closest('svg') !== null;
      const child = inSvg ? e.firstElementChild && getComputedStyle(e.firstElementChild) : null;
      const visible = (s.outlineStyle !== 'none' && s.outlineWidth !== '0px' && s.outlineColor !== 'rgba(0, 0, 0, 0)')
        || (s.boxShadow && s.boxShadow !== 'none')
        || (child && child.strokeWidth === '2.5px');
      return { id: e.dataset.a11yId ?? null, visible, what: `${e.tagName.toLowerCase()}#${e.id}.${e.className?.baseVal ?? e.className}` };
    });
    if (!info) continue;
    if (info.id) reached.add(info.id);
    if (!info.visible) invisible.push(info.what);
  }
  const missed = controls.filter((c) => !reached.has(c));
  const names = await page.$$eval('[data-a11y-id]', (els, missed) => els.filter((e) => missed.includes(e.dataset.a11yId))
    .map((e) => `${e.tagName.toLowerCase()}#${e.id} ${e.textContent.trim().slice(0, 30)}`), missed);
  assert.deepEqual(names, [], 'controls Tab never reached');
  assert.deepEqual([...new Set(invisible)], [], 'focused without a visible focus');
  // Run and the help from the keyboard.
  await page.focus('button#run');
  const generation = Number(await page.getAttribute('#run-status', 'data-run'));
  await page.keyboard.press('Enter');
  await page.waitForFunction((g) => Number(document.querySelector('#run-status').dataset.run) > g
    && /^done/.test(document.querySelector('#run-status').textContent), generation, { timeout: 60_000 });
  // Each chart has a text alternative that states its numbers.
  const alts = await page.$$eval('.chart > svg', (svgs) => svgs.map((s) => [s.getAttribute('role'), s.getAttribute('aria-label')]));
  assert.ok(alts.length >= 2);
  for (const [role, alt] of alts) {
    assert.equal(role, 'group');
    assert.match(alt, /(Line|Bar) chart of .*\d/);
  }
  assert.deepEqual(errors, []);
  await page.close();
});
