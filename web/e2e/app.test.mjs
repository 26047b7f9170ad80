// The app loads from a sub-path, renders itself, and runs experiments in
// its worker pool with the same numbers as the native CLI.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { useBrowser, openPage, screenshot, root, cli } from './harness.mjs';

const env = useBrowser();

test('the title and Run button are rendered by the wasm app, not index.html', async () => {
  const html = await readFile(path.join(root, 'dist', 'index.html'), 'utf8');
  assert.ok(!html.includes('id="run"'), 'index.html must not contain the Run button');
  const { page, errors } = await openPage(env.browser, env.server.url);
  assert.equal(await page.textContent('h1'), 'schedlab');
  assert.equal(await page.textContent('button#run'), 'Run');
  assert.ok((await page.$$('#preset option')).length >= 10, 'every preset is offered');
  assert.deepEqual(errors, []);
  await page.close();
});

test('a preset runs in the worker pool and gives the native CLI\'s results byte for byte', async () => {
  const { page, errors } = await openPage(env.browser, env.server.url);
  await page.selectOption('#preset', 'kvm-pipe-test-pinning');
  await page.click('button#run');
  await page.waitForSelector('#results-json', { state: 'attached', timeout: 120_000 });
  const table = await page.textContent('#results-table');
  assert.match(table, /pinned\s+free/);
  assert.match(table, /[+-]\d+\.\d\d% (win|loss)/);
  const status = await page.textContent('#run-status');
  const cores = await page.evaluate(() => navigator.hardwareConcurrency);
  assert.match(status, new RegExp(`done: 2 points on ${Math.min(cores, 2)} workers`));
  const browserJson = await page.textContent('#results-json');
  assert.equal(browserJson, cli(['run', 'kvm-pipe-test-pinning', '--format', 'json']));
  await screenshot(page, 'run-kvm-preset');
  assert.deepEqual(errors, []);
  await page.close();
});

test('a worker that fails mid-run ends the run with its message', async () => {
  const page = await env.browser.newPage();
  // Every worker the page starts throws as soon as it loads.
  await page.addInitScript(() => {
    const Real = window.Worker;
    window.Worker = class extends Real {
      constructor(_url, options) {
        const src = "throw new Error('the simulated worker broke');";
        super(URL.createObjectURL(new Blob([src], { type: 'application/javascript' })), options);
      }
    };
  });
  await page.goto(`${env.server.url}#preset=kvm-pipe-test-pinning`);
  await page.waitForSelector('#app[data-ready="true"]');
  await page.click('button#run');
  const error = await page.waitForSelector('#run-error', { timeout: 20_000 });
  assert.match(await error.textContent(), /^Run failed: a Web Worker stopped: .*the simulated worker broke/);
  assert.equal(await page.isEnabled('button#run'), true, 'the run is over; Run works again');
  await page.close();
});
