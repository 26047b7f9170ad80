// Measures how long a keystroke in the seed field takes to reach the next
// frame, for an experiment on a small and on a 1,024-CPU machine (issue 20).
// Not a test (timings are the machine's): run `node web/e2e/keystroke-latency.mjs
// CODE_SMALL CODE_BIG` with two `schedlab encode` outputs after `scripts/build`.
import { serveDist, launchBrowser, openPage, field } from './harness.mjs';

const server = await serveDist();
const browser = await launchBrowser();
for (const code of process.argv.slice(2)) {
  const { page } = await openPage(browser, `${server.url}#x=${code}`);
  const input = page.locator(field('seed'));
  await input.click();
  const times = [];
  for (let i = 0; i < 8; i++) {
    await input.press('End');
    const t = await page.evaluate(
      () =>
        new Promise((resolve) => {
          const el = document.querySelector('[data-field="seed"]');
          const start = performance.now();
          el.value = el.value + '1';
          el.dispatchEvent(new InputEvent('input', { bubbles: true }));
          requestAnimationFrame(() => setTimeout(() => resolve(performance.now() - start), 0));
        }),
    );
    times.push(t);
    await page.waitForTimeout(400);
  }
  times.sort((a, b) => a - b);
  const cpus = await page.evaluate(() => document.querySelectorAll('[data-cpu]').length);
  console.log(`${cpus} CPU boxes: keystroke to next frame median ${times[4].toFixed(1)} ms, max ${times[7].toFixed(1)} ms`);
  await page.close();
}
await browser.close();
server.close();
