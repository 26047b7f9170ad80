// The app loads from a sub-path, renders itself, and runs experiments in
// its worker pool with the same numbers as the native CLI.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, readdir } from 'node:fs/promises';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { useBrowser, openPage, screenshot, root, cli, runToEnd } from './harness.mjs';

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
  // Where the CPUs' time went, per variant, under the latency table.
  assert.match(table, /cpu time \(% of all CPUs' time after the warm-up\)\n\s*variant\s+user\s+kernel\s+balancing\s+net_rx\s+idle\n-\s+pinned(\s+\d+\.\d){5}\n/);
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
  // Every worker the page starts throws as soon as it loads (its start
  // module, served from the site as the CSP requires).
  await page.route('**/worker-start-*.js', (route) =>
    route.fulfill({ contentType: 'text/javascript', body: "throw new Error('the simulated worker broke');" }));
  await page.goto(`${env.server.url}#preset=kvm-pipe-test-pinning`);
  await page.waitForSelector('#app[data-ready="true"]');
  await page.click('button#run');
  const error = await page.waitForSelector('#run-error', { timeout: 20_000 });
  assert.match(await error.textContent(), /^Run failed: a Web Worker stopped: .*the simulated worker broke/);
  assert.equal(await page.isEnabled('button#run'), true, 'the run is over; Run works again');
  await page.close();
});

test('every asset is named by its content but the entry points; index.html names the worker', async () => {
  const dist = path.join(root, 'dist');
  const files = await readdir(dist);
  // The entry points, the 404 page, the book, and wasm-bindgen's snippets
  // (named by the crate, not their content: README's deploy section).
  const entries = new Set(['index.html', 'schedlab-js.js', 'schedlab-js-example.html', '404.html', 'book', 'snippets']);
  for (const f of files.filter((f) => !entries.has(f))) {
    // trunk prints its 64-bit hash without leading zeros (one build in 16
    // has 15 digits); tools/hash-assets always writes 16.
    assert.match(f, /-[0-9a-f]{8,16}(_bg)?\.(js|wasm|css|svg)$/, `${f} is not content-hashed`);
  }
  assert.ok(!files.includes('worker.js') && !files.includes('worker_bg.wasm'));
  const html = await readFile(path.join(dist, 'index.html'), 'utf8');
  const worker = html.match(/<meta name="schedlab-worker" content="\.\/(worker-[0-9a-f]{16}\.js)">/);
  assert.ok(worker, 'index.html names the hashed worker');
  assert.ok(files.includes(worker[1]));
  const glue = await readFile(path.join(dist, worker[1]), 'utf8');
  assert.ok(glue.includes(worker[1].replace('.js', '_bg.wasm')), 'the worker glue loads its own hashed wasm');
  const start = html.match(/<meta name="schedlab-worker-start" content="\.\/(worker-start-[0-9a-f]{16}\.js)">/);
  assert.ok(start && files.includes(start[1]), 'index.html names the module a worker starts from');
  assert.ok((await readFile(path.join(dist, start[1]), 'utf8')).includes(`from './${worker[1]}'`), 'which starts the hashed worker');
  assert.ok(!files.includes('runs.js') && !files.includes('runs_bg.wasm'));
  const runs = html.match(/<meta name="schedlab-runs" content="\.\/(runs-[0-9a-f]{16}\.js)">/);
  assert.ok(runs, 'index.html names the hashed runs module');
  assert.ok(files.includes(runs[1]));
  const runsGlue = await readFile(path.join(dist, runs[1]), 'utf8');
  assert.ok(runsGlue.includes(runs[1].replace('.js', '_bg.wasm')), 'the runs module\'s glue loads its own hashed wasm');
  const api = await readFile(path.join(dist, 'schedlab-js.js'), 'utf8');
  const module = api.match(/export \* from '\.\/(schedlab-js-[0-9a-f]{16}\.js)'/);
  assert.ok(module && files.includes(module[1]), api);
});

test('before Run the page says about how long the run will take', async () => {
  const { page, errors } = await openPage(env.browser, `${env.server.url}#preset=kvm-pipe-test-pinning`);
  const estimate = await page.waitForSelector('#run-estimate', { timeout: 30_000 });
  // The seconds depend on the machine; the words do not.
  assert.match(await estimate.textContent(), /^: (about \d+ (s|min|h)|under a second|at least .+) on \d+ workers?$/);
  await screenshot(page, 'estimate-before-run', { fullPage: false });
  await runToEnd(page);
  // A finished run keeps its rate; the next run's estimate follows it.
  assert.ok(await page.evaluate(() => Number(localStorage.getItem('schedlab-events-per-sec')) > 0));
  await page.fill('[data-field="seed"]', '5');
  const next = await page.waitForSelector('#run-estimate', { timeout: 30_000 });
  assert.match(await next.textContent(), /^; next run (about|under|at least)/);
  assert.deepEqual(errors, []);
  await page.close();
});

test('a worker from another build is refused, and the page says reload', async () => {
  const page = await env.browser.newPage();
  // Every worker claims another build in its Ready message.
  await page.addInitScript(() => {
    const Real = window.Worker;
    window.Worker = class extends Real {
      set onmessage(handler) {
        super.onmessage = (e) => {
          const data = typeof e.data === 'string' ? e.data.replace(/"build":"[0-9a-f]+"/, '"build":"0000000000000000"') : e.data;
          handler(new MessageEvent('message', { data }));
        };
      }
      get onmessage() { return super.onmessage; }
    };
  });
  await page.goto(`${env.server.url}#preset=kvm-pipe-test-pinning`);
  await page.waitForSelector('#app[data-ready="true"]');
  await page.click('button#run');
  const error = await page.waitForSelector('#run-error', { timeout: 20_000 });
  assert.match(await error.textContent(), /^Run failed: this page \(build [0-9a-f]{16}\) and its Web Worker \(build 0000000000000000\) come from different builds of schedlab.*; reload the page$/);
  await page.close();
});

test('the first load fetches no runs module; the first Run fetches it once, and later runs reuse it', async () => {
  const page = await env.browser.newPage();
  const fetched = [];
  page.on('request', (r) => fetched.push(new URL(r.url()).pathname.split('/').pop()));
  const runsModule = (f) => /^runs-[0-9a-f]{16}(_bg\.wasm|\.js)$/.test(f);
  await page.goto(`${env.server.url}#preset=kvm-pipe-test-pinning`);
  await page.waitForSelector('#app[data-ready="true"]');
  // The page is idle and has measured its estimate (the probe's worker came and went).
  await page.waitForSelector('#run-estimate', { timeout: 30_000 });
  assert.ok(fetched.some((f) => /^app-[0-9a-f]+_bg\.wasm$/.test(f)), fetched.join(' '));
  assert.deepEqual(fetched.filter(runsModule), [], 'nothing of the runs module before Run');
  assert.equal(await page.$('#results'), null);
  await runToEnd(page);
  assert.deepEqual(fetched.filter(runsModule).sort().map((f) => f.replace(/[0-9a-f]{16}/, 'H')), ['runs-H.js', 'runs-H_bg.wasm']);
  assert.ok(await page.$('#results-host #results'), 'the runs module draws the results in the editor\'s host');
  await runToEnd(page);
  assert.equal(fetched.filter(runsModule).length, 2, 'the second run fetches nothing again');
  await page.close();
});

test('the editor and the runs module are sibling Yew apps, each hearing only its own clicks', async () => {
  const { page, errors } = await openPage(env.browser, `${env.server.url}#preset=kvm-pipe-test-pinning`);
  await runToEnd(page);
  // The frame: the editor's two parts around the host, none inside another.
  const frame = await page.$eval('#app', (app) => [...app.children].map((c) => c.id));
  assert.deepEqual(frame, ['editor-top', 'results-host', 'editor-bottom']);
  assert.ok(await page.$('#editor-top #run') && await page.$('#editor-bottom #history'), 'the editor draws both parts');
  // A click in the results reaches the runs app (a download), one in the
  // editor reaches the editor (the button says so), each once.
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#chart-variants [data-export="svg"]')]);
  assert.match(download.suggestedFilename(), /variants\.svg$/);
  const theme = await page.textContent('#theme');
  await page.click('#theme');
  assert.notEqual(await page.textContent('#theme'), theme);
  assert.deepEqual(errors, []);
  await page.close();
});

test('a runs module from another build is refused, and the page says reload', async () => {
  const page = await env.browser.newPage();
  // The runs module's Ready claims another build.
  await page.addInitScript(() => {
    const real = window.dispatchEvent.bind(window);
    window.dispatchEvent = (e) => {
      if (e.type === 'schedlab-to-editor' && typeof e.detail === 'string' && e.detail.includes('"Ready"')) {
        e = new CustomEvent(e.type, { detail: e.detail.replace(/"build":"[0-9a-f]+"/, '"build":"0000000000000000"') });
      }
      return real(e);
    };
  });
  await page.goto(`${env.server.url}#preset=kvm-pipe-test-pinning`);
  await page.waitForSelector('#app[data-ready="true"]');
  await page.click('button#run');
  const error = await page.waitForSelector('#run-error', { timeout: 20_000 });
  assert.match(await error.textContent(), /^Run failed: this page \(build [0-9a-f]{16}\) and its runs module \(build 0000000000000000\) come from different builds of schedlab.*; reload the page$/);
  assert.equal(await page.$('#results'), null, 'no results from a module of another build');
  await page.close();
});

test('the gzipped size of the first-load wasm is reported, within its budget', () => {
  const out = execFileSync(path.join(root, 'scripts', 'wasm-sizes'), { encoding: 'utf8' });
  const html = execFileSync('cat', [path.join(root, 'dist', 'index.html')], { encoding: 'utf8' });
  const app = html.match(/href="\.\/(app-[0-9a-f]+_bg\.wasm)"/)[1];
  const line = out.split('\n').find((l) => l.startsWith(app));
  assert.match(line, /\d+ bytes, +\d+ gzipped +first load$/, out);
  assert.match(out, /^runs-[0-9a-f]{16}_bg\.wasm +\d+ bytes, +\d+ gzipped +at the first Run$/m, out);
  const total = Number(out.match(/^first load: (\d+) bytes of gzipped app wasm/m)[1]);
  assert.equal(total, Number(line.match(/(\d+) gzipped/)[1]));
  console.log(out.trim());
});
