// The app loads from a sub-path, renders itself, and talks to its worker.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { serveDist, launchBrowser, openPage, screenshot, root } from './harness.mjs';

let server;
let browser;
before(async () => {
  server = await serveDist();
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
  await server?.close();
});

test('the title and Run button are rendered by the wasm app, not index.html', async () => {
  const html = await readFile(path.join(root, 'dist', 'index.html'), 'utf8');
  assert.ok(!html.includes('id="run"'), 'index.html must not contain the Run button');
  const { page, errors } = await openPage(browser, server.url);
  assert.equal(await page.textContent('h1'), 'schedlab');
  assert.equal(await page.textContent('button#run'), 'Run');
  assert.deepEqual(errors, []);
  await page.close();
});

test('the worker round trip shows an answer computed by the core', async () => {
  const { page, errors } = await openPage(browser, server.url);
  await page.waitForSelector('#worker-answer[data-answered="true"]', { timeout: 30_000 });
  const answer = await page.textContent('#worker-answer');
  assert.match(answer, /ivb-ep-2s: 40 CPUs, 2 nodes/);
  assert.match(answer, /SMT > MC > NUMA/);
  await screenshot(page, 'foundation');
  assert.deepEqual(errors, []);
  await page.close();
});
