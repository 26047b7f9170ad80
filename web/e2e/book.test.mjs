// The book (docs/book, built into dist/book/): reached from the page's Book
// link, every chapter loads under the site's sub-path with nothing missing,
// and each embedded experiment loads, runs, draws its chart and grows its
// frame to fit.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useBrowser, openPage, screenshot, leavesOrigin } from './harness.mjs';

const env = useBrowser();

/** A book page, recording console errors, failed requests and requests
 * that leave the site's origin. */
async function openBook(url) {
  const page = await env.browser.newPage({ viewport: { width: 1280, height: 900 } });
  const errors = [];
  page.on('console', (msg) => msg.type() === 'error' && errors.push(msg.text()));
  page.on('pageerror', (err) => errors.push(String(err)));
  page.on('response', (res) => res.status() >= 400 && errors.push(`${res.status()} ${res.url()}`));
  page.on('request', (req) => leavesOrigin(req.url(), env.server.url) && errors.push(`left the origin: ${req.url()}`));
  await page.goto(url);
  return { page, errors };
}

test('the Book link opens the book, and every chapter loads under the sub-path', async () => {
  const { page, errors } = await openPage(env.browser, env.server.url);
  await Promise.all([page.waitForURL(/\/schedlab\/book\//), page.click('#book-link')]);
  assert.match(await page.title(), /schedlab/);
  const chapters = await page.$$eval('#mdbook-sidebar a[href$=".html"], .sidebar a[href$=".html"]', (as) => [...new Set(as.map((a) => a.href))]);
  assert.ok(chapters.length >= 12, `the sidebar lists the chapters (${chapters.length})`);
  await page.close();
  for (const url of chapters) {
    assert.ok(url.startsWith(`${env.server.url}book/`), `${url} stays under the sub-path`);
    const { page: chapter, errors: chapterErrors } = await openBook(url);
    const text = await chapter.textContent('main');
    assert.ok(text.trim().length > 200, `${url} has content`);
    assert.doesNotMatch(text, /\{\{#include/, `${url}: every include was expanded`);
    assert.deepEqual(chapterErrors, [], url);
    await chapter.close();
  }
  assert.deepEqual(errors, []);
});

test('the generated tables are in the chapters, as the CLI prints them', async () => {
  const { page, errors } = await openBook(`${env.server.url}book/retune.html`);
  const blocks = await page.$$eval('main pre code', (cs) => cs.map((c) => c.textContent));
  assert.ok(blocks.some((b) => /1 thread|threads/.test(b)), 'the sysbench table');
  assert.ok(blocks.some((b) => /published/i.test(b) && /simulated/i.test(b)), 'published beside simulated');
  assert.deepEqual(errors, []);
  await page.close();
});

for (const chapter of ['tour', 'retune', 'waweight']) {
  test(`${chapter}: each embedded experiment loads, runs, shows its chart and fits its frame`, async () => {
    const { page, errors } = await openBook(`${env.server.url}book/${chapter}.html`);
    const frames = page.locator('iframe.schedlab-embed');
    const count = await frames.count();
    assert.ok(count >= 1, 'the chapter embeds an experiment');
    for (let i = 0; i < count; i++) {
      const element = frames.nth(i);
      await element.scrollIntoViewIfNeeded(); // they load lazily
      const src = await element.getAttribute('src');
      const frame = element.contentFrame();
      await frame.locator('#app[data-ready="true"]').waitFor({ timeout: 30_000 });
      const before = (await element.boundingBox()).height;
      await frame.locator('button#run').click();
      await frame.locator('.chart > svg').first().waitFor({ timeout: 120_000 });
      await frame.locator('#results-table').waitFor({ timeout: 120_000 });
      // The frame follows its content: taller than before, and no part of
      // the content hidden below the frame's bottom edge.
      await page.waitForFunction(
        ([index, was]) => {
          const f = document.querySelectorAll('iframe.schedlab-embed')[index];
          const inner = f.contentDocument.documentElement;
          return f.getBoundingClientRect().height > was && inner.scrollHeight <= f.clientHeight + 1;
        },
        [i, before],
        { timeout: 10_000 },
      ).catch(async () => {
        const [h, inner] = await element.evaluate((f) => [f.clientHeight, f.contentDocument.documentElement.scrollHeight]);
        assert.fail(`${src}: frame ${h} px (was ${before}) for content ${inner} px`);
      });
      await element.scrollIntoViewIfNeeded();
      await screenshot(page, `book-${chapter}-${i}`, { fullPage: false });
    }
    assert.deepEqual(errors, []);
    await page.close();
  });
}
