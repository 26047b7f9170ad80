// Measures schedlab-js's bench in headless Chromium (the release build in
// dist/) beside the release CLI's, for the performance notes. Not a test:
// run `node web/e2e/bench-browser.mjs` after `scripts/build` and
// `cargo build --release -p schedlab-cli`. CHROMIUM_JS_FLAGS passes V8 flags
// (e.g. "--no-liftoff --no-wasm-tier-up", which changed nothing measurable).
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { serveDist, launchBrowser, root } from './harness.mjs';

const server = await serveDist();
const browser = await launchBrowser();
const page = await browser.newPage();
await page.goto(`${server.url}schedlab-js-example.html`);
await page.waitForFunction(() => document.body.dataset.done, null, { timeout: 60_000 });
for (let round = 0; round < 2; round++) {
  const lines = await page.evaluate(async () => {
    const m = await import('./schedlab-js.js');
    await m.default();
    return m.bench();
  });
  const native = execFileSync(path.join(root, 'target/release/schedlab'), ['bench'], { encoding: 'utf8' })
    .split('\n').slice(1).filter(Boolean).map((l) => l.trim().split(/\s+/));
  for (const l of lines) {
    const n = native.find((r) => r[0] === l.case);
    if (!n) continue;
    const b = l.events / l.wall_ms / 1000;
    console.log(`${l.case.padEnd(24)} browser ${b.toFixed(2)}  native ${n[3]}  native/browser ${(Number(n[3]) / b).toFixed(2)}`);
  }
}
await browser.close();
server.close();
