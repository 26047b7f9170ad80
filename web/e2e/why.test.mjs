// Why, in the page: a wakeup clicked in the timeline shows the decision
// tree behind it, and "Where A and B part" shows the divergence report the
// CLI prints, with both variants' timelines from just before the parting;
// the embed has the same button.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { useBrowser, openPage, runToEnd, screenshot, screenshots, cli, axeViolations } from './harness.mjs';

/** The Why panel alone, to web/e2e/screenshots/NAME.png. */
const panelShot = (page, name) => page.locator('#why-panel').screenshot({ path: path.join(screenshots, `${name}.png`) });

const env = useBrowser();

test('a wakeup clicked in the timeline shows the decision that placed it', async () => {
  const { page, errors } = await openPage(env.browser, `${env.server.url}#preset=retune-pipe-test`);
  await runToEnd(page);
  const mark = page.locator('#timeline .timeline-block[data-variant-label="2.6.28"] polygon.wakeup').first();
  const task = Number(await mark.getAttribute('data-task'));
  await mark.click();
  await page.waitForSelector('#why-tree', { timeout: 60_000 });
  const tree = await page.textContent('#why-tree');
  assert.match(tree, /^1 decision of variant 2\.6\.28 \(era 2\.6\.28\)/);
  assert.match(tree, new RegExp(`wakeup of \\S+ \\(#${task}\\) from CPU \\d+  -> CPU \\d+`));
  assert.match(tree, /\n  select_task_rq_fair\n/);
  // Keyboard users reach the marks too: one Tab stop per block (its first
  // mark), arrows move between marks, Enter asks.
  const block = '#timeline .timeline-block[data-variant-label="2.6.27"]';
  assert.equal(await page.$$eval(`${block} polygon.clickable[tabindex="0"]`, (m) => m.length), 1);
  await page.focus(`${block} polygon.clickable[tabindex="0"]`);
  await page.keyboard.press('ArrowRight');
  const moved = await page.evaluate((b) => {
    const marks = [...document.querySelectorAll(`${b} polygon.clickable`)];
    return marks.indexOf(document.activeElement);
  }, block);
  assert.equal(moved, 1);
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => /variant 2\.6\.27/.test(document.querySelector('#why-tree')?.textContent ?? ''), null, { timeout: 60_000 });
  await panelShot(page, 'why-tree');
  assert.deepEqual(errors, []);
  await page.close();
});

/** Runs `preset` in the page and asks where A and B part; the report must
 * be what `schedlab diverge` prints. */
async function divergeInPage(preset) {
  const { page, errors } = await openPage(env.browser, `${env.server.url}#preset=${preset}`);
  await runToEnd(page);
  await page.click('#diverge');
  await page.waitForSelector('#divergence', { timeout: 120_000 });
  const text = await page.textContent('#divergence');
  assert.equal(text, cli(['diverge', preset]));
  return { page, errors, text };
}

test('Where A and B part shows what schedlab diverge prints, and the timelines there', async () => {
  const { page, errors, text } = await divergeInPage('retune-pipe-test');
  assert.match(text, /traces back to the policy difference NODE SD_WAKE_AFFINE: off in A, on in B/);
  const blocks = await page.$$eval('#divergence-timeline .timeline-block', (bs) => bs.map((b) => ({
    label: b.dataset.variantLabel,
    slices: b.querySelectorAll('rect.slice').length,
    parting: b.querySelectorAll('line.parting').length,
  })));
  assert.deepEqual(blocks.map((b) => b.label), ['2.6.27', '2.6.28']);
  for (const b of blocks) assert.ok(b.slices > 0 && b.parting === 1, JSON.stringify(b));
  await panelShot(page, 'why-divergence');
  assert.deepEqual(await axeViolations(page), [], 'axe with the divergence shown');
  assert.deepEqual(errors, []);
  await page.close();
});

test('the embed asks where A and B part too', async () => {
  const { page, errors } = await openPage(env.browser, `${env.server.url}?embed#preset=retune-pipe-test&run`);
  await page.waitForSelector('#diverge', { timeout: 120_000 });
  await page.click('#diverge');
  await page.waitForSelector('#divergence', { timeout: 60_000 });
  assert.match(await page.textContent('#divergence'), /A and B part at/);
  await screenshot(page, 'why-embed');
  assert.deepEqual(errors, []);
  await page.close();
});

test('the waweight-first-pull card tells its story: the first wakeup WA_WEIGHT pulls', async () => {
  const { page, errors, text } = await divergeInPage('waweight-first-pull');
  assert.match(text, /traces back to the policy difference WA_WEIGHT: off in A, on in B/);
  assert.match(text, /this_eff_load \(\d+\) <= prev_eff_load \(\d+\): true/);
  await panelShot(page, 'why-first-pull');
  assert.deepEqual(errors, []);
  await page.close();
});
