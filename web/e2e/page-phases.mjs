// Where a preset's page time goes (not a test; for docs/perf/): opens each
// named preset's link with two workers, clicks Run, and prints the time to
// the results and how long the page's own thread was busy meanwhile (the
// DevTools protocol's TaskDuration, split into script, layout and the rest:
// paint, messages, compilation). That thread shares the machine's cores
// with the workers, so its busy time comes off theirs.
// `node web/e2e/page-phases.mjs PRESET...` after `scripts/build`.
import { serveDist, launchBrowser, openPage } from './harness.mjs';

const names = process.argv.slice(2);
if (names.length === 0) {
  console.error('usage: node web/e2e/page-phases.mjs PRESET...');
  process.exit(2);
}
const server = await serveDist();
const browser = await launchBrowser();
for (const name of names) {
  const { page } = await openPage(browser, `${server.url}#preset=${name}`, { cores: 2 });
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Performance.enable');
  const metrics = async () =>
    Object.fromEntries((await cdp.send('Performance.getMetrics')).metrics.map((m) => [m.name, m.value]));
  const before = await metrics();
  const start = Date.now();
  await page.click('button#run');
  // Polled every 250 ms, not every frame, so that the polling draws nothing.
  await page.waitForFunction(() => /^done/.test(document.querySelector('#run-status').textContent), null, {
    timeout: 300_000,
    polling: 250,
  });
  const wall = Date.now() - start;
  const after = await metrics();
  const ms = (k) => ((after[k] - before[k]) * 1000).toFixed(0);
  console.log(
    `${name.padEnd(30)} ${wall} ms to the results; the page's thread busy ${ms('TaskDuration')} ms ` +
      `(script ${ms('ScriptDuration')}, layout ${ms('LayoutDuration')}, style ${ms('RecalcStyleDuration')}, other ${ms('TaskOtherDuration')})`,
  );
  await page.close();
}
await browser.close();
await server.close();
