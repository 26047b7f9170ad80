// Every width from a phone to a large desktop: no sideways scroll, no label
// broken inside a word, the Kernel panel scrolling within itself on narrow
// screens; screenshots at 360 px.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useBrowser, openPage, runToEnd, screenshot, field } from './harness.mjs';

const env = useBrowser();

const WIDTHS = [360, 390, 480, 768, 1024, 1366, 1920, 2560];

/** How far the page is wider than the window (0 or less is good). */
const overflow = (page) => page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);

/** Words of visible labels, buttons and headings that are split over two lines. */
const brokenWords = (page) => page.evaluate(() => {
  const out = [];
  const els = document.querySelectorAll('label, .label, button, summary, h1, h2, h3, th, .card-title, .card-text, legend, .status');
  for (const el of els) {
    if (!el.offsetParent) continue;
    const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const text = node.textContent;
      // Lines may break after a hyphen or slash, as text does; not inside a word.
      const re = /[^\s\-\/]+/g;
      let m;
      while ((m = re.exec(text))) {
        const range = document.createRange();
        range.setStart(node, m.index);
        range.setEnd(node, m.index + m[0].length);
        const tops = new Set([...range.getClientRects()].filter((r) => r.width > 0).map((r) => Math.round(r.top)));
        if (tops.size > 1) out.push(`${m[0]} (in ${el.tagName.toLowerCase()}.${el.className})`);
      }
    }
  }
  return [...new Set(out)];
});

test('from 360 to 2560 px: no sideways scroll and no label broken inside a word', async () => {
  const { page, errors } = await openPage(env.browser, `${env.server.url}#preset=waweight-hackbench-20`, { viewport: { width: 1366, height: 900 } });
  await page.fill(field('workload.loops'), '20');
  await runToEnd(page);
  for (const width of WIDTHS) {
    await page.setViewportSize({ width, height: 900 });
    await page.waitForTimeout(50);
    assert.ok((await overflow(page)) <= 0, `${width}px: the page is ${await overflow(page)}px wider than the window`);
    assert.deepEqual(await brokenWords(page), [], `${width}px: words broken inside`);
  }
  // Narrow: the Kernel panel's tables scroll inside the panel.
  await page.setViewportSize({ width: 360, height: 740 });
  const kernel = await page.$eval('#kernel-panel', (p) => ({ scroll: p.scrollWidth, client: p.clientWidth, css: getComputedStyle(p).overflowX }));
  assert.equal(kernel.css, 'auto');
  assert.ok(kernel.client <= 360, JSON.stringify(kernel));
  await page.evaluate(() => window.scrollTo(0, 0));
  await screenshot(page, 'layout-360-top', { fullPage: false });
  await page.$eval('#results', (r) => r.scrollIntoView());
  await screenshot(page, 'layout-360-results', { fullPage: false });
  await page.$eval('#kernel-panel', (r) => r.scrollIntoView());
  await screenshot(page, 'layout-360-kernel', { fullPage: false });
  await screenshot(page, 'layout-360-full');
  assert.deepEqual(errors, []);
  await page.close();
});

test('360 px: the help overlay and the embed fit', async () => {
  const { page, errors } = await openPage(env.browser, env.server.url, { viewport: { width: 360, height: 740 } });
  await page.keyboard.press('?');
  assert.ok(await page.isVisible('#help'));
  assert.ok((await overflow(page)) <= 0);
  await screenshot(page, 'layout-360-help', { fullPage: false });
  await page.close();
  const embed = await openPage(env.browser, `${env.server.url}?embed#preset=kvm-pipe-test-pinning`, { viewport: { width: 360, height: 740 } });
  await embed.page.click('button#run');
  await embed.page.waitForSelector('#results-table', { timeout: 60_000 });
  assert.ok((await overflow(embed.page)) <= 0);
  assert.deepEqual(await brokenWords(embed.page), []);
  await screenshot(embed.page, 'layout-360-embed');
  assert.deepEqual([...errors, ...embed.errors], []);
  await embed.page.close();
});
