// Workloads of your own: a benchmark edited as a custom workload (errors at
// line and column, kept in the link), a pasted rt-app file, and the
// wakeup-latency CDF drawn per variant, and a scheduler trace replayed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { useBrowser, openPage, runToEnd, field, screenshots, screenshot, root } from './harness.mjs';

const env = useBrowser();

async function setText(page, selector, text) {
  await page.fill(selector, text);
  await page.dispatchEvent(selector, 'change');
}

test('a benchmark becomes a custom workload edited as text, kept in the link, with a latency CDF', async () => {
  const { page, errors } = await openPage(env.browser, env.server.url);
  await page.selectOption('#preset', 'retune-pipe-test');
  await page.click('button#to-custom');
  const program = field('workload.program');
  await page.waitForSelector(program);
  assert.match(await page.inputValue(program), /"kind": "custom"/);
  assert.match(await page.inputValue(program), /"fork"/, 'the generator\'s program is shown');

  await setText(page, program, '{\n  "tasks": [\n}');
  const err = await page.textContent(`label:has(${program}) .field-error`);
  assert.match(err, /^line 3, column 1/);
  assert.equal(await page.isDisabled('button#run'), true);
  assert.equal(await page.inputValue(program), '{\n  "tasks": [\n}', 'the text typed stays');

  // Errors found after parsing name a JSON path, and say where it is.
  await setText(page, program, '{\n  "kind": "custom",\n  "tasks": [\n    {"name": "a", "program": [{"comput": {"ns": 1}}]}\n  ]\n}');
  assert.match(await page.textContent(`label:has(${program}) .field-error`),
    /^line 4, column 31: workload\.tasks\[0\]\.program\[0\] \(task "a", comput\): unknown variant/);
  await setText(page, program, JSON.stringify({ kind: 'custom', tasks: [{ name: 'a', program: [{ write: { chan: 3, bytes: 1 } }] }] }));
  const missing = await page.textContent(`label:has(${program}) .field-error`);
  const [, line] = missing.match(/^line (\d+), column \d+: workload\.tasks\[0\]\.program\[0\] .*channel 3 does not exist/);
  const shown = (await page.inputValue(program)).split('\n');
  assert.match(shown[Number(line) - 1], /"write"|\{$/, `line ${line} of the text shown holds the instruction`);

  await setText(page, program, JSON.stringify({
    kind: 'custom',
    duration_ms: 20,
    channels: [{ kind: 'pipe' }],
    tasks: [
      { name: 'producer', program: [{ forever: [{ compute: { ns: 20000 } }, { write: { chan: 0, bytes: 64 } }] }] },
      { name: 'consumer', program: [{ forever: [{ read: { chan: 0, bytes: 64 } }, { compute: { ns: 5000 } }] }] },
    ],
  }));
  assert.equal(await page.$('.field-error'), null);
  const results = await runToEnd(page);
  for (const v of results.variants) {
    assert.ok(results.rows[0].wakeup_latency[v].wakeups > 0, v);
  }
  const curves = await page.$$eval('#chart-latency-cdf polyline', (p) => p.map((x) => x.dataset.variant));
  assert.deepEqual(curves, results.variants);
  // Each percentile the JSON states is a focusable point with its value, and the chart downloads.
  const p99 = `#chart-latency-cdf .marker[data-variant="${results.variants[0]}"][data-x="p99"]`;
  assert.equal(Number(await page.getAttribute(p99, 'data-value')), results.rows[0].wakeup_latency[results.variants[0]].p99_ns / 1000);
  await page.focus(p99);
  assert.match(await page.textContent('#chart-latency-cdf .readout'), new RegExp(`^${results.variants[0]}: p99 `));
  assert.equal(await page.locator('#chart-latency-cdf [data-export]').count(), 2);
  await page.locator('#chart-latency-cdf').screenshot({ path: path.join(screenshots, 'latency-cdf.png') });

  // The link carries the program.
  await page.waitForFunction(() => location.hash.startsWith('#x=1.'));
  const url = page.url();
  const again = await openPage(env.browser, url);
  await again.page.waitForSelector(program);
  assert.match(await again.page.inputValue(program), /"consumer"/);
  assert.deepEqual(again.errors, []);
  await again.page.close();
  assert.deepEqual(errors, []);
  await page.close();
});

test('a pasted rt-app file, in rt-app\'s dialect, runs its tasks; what is not modelled is refused at the field', async () => {
  const { page, errors } = await openPage(env.browser, env.server.url);
  await page.selectOption('#preset', 'retune-lat-ctx');
  const rtapp = field('workload.rtapp');
  await setText(page, rtapp, JSON.stringify({ tasks: { t: { loop: -1, policy: 'SCHED_DEADLINE', run: 100 } }, global: { duration: 1 } }));
  // The import runs in a worker: its answer comes back a moment later.
  const refused = await page.waitForSelector(`label:has(${rtapp}) .field-error`);
  assert.match(await refused.textContent(), /tasks\.t\.policy \(line 1\): SCHED_DEADLINE is not modelled/);
  // json-c's non-strict syntax, as rt-app's own examples are written.
  await setText(page, rtapp, [
    '/* a video task */',
    '{',
    '  "tasks": { "video": { "loop": -1, "run": 2000, "timer": { "ref": "unique", "period": 8000 }, }, },',
    '  "global": { "duration": 1, "calibration": "CPU0" }, // rt-app\'s own',
    '}',
  ].join('\n'));
  const program = field('workload.program');
  await page.waitForSelector(program);
  assert.match(await page.inputValue(program), /"video\.slack"/);
  await page.waitForFunction(() => /global\.calibration/.test(document.querySelector('#notice')?.textContent ?? ''));
  assert.match(await page.textContent('#notice'), /^accepted and ignored \(no effect in a simulation\): global\.calibration/);
  assert.deepEqual(errors, []);
  await page.close();
});

test('a scheduler trace, chosen or dropped, imports in a worker with progress and runs as any experiment', async () => {
  const { page, errors } = await openPage(env.browser, env.server.url);
  await page.selectOption('#preset', 'kvm-pipe-test-pinning');
  const fixture = path.join(root, 'crates/schedlab/tests/traces/pipe-pingpong.txt.gz');
  await page.setInputFiles('#trace-file', fixture);
  await page.waitForFunction(() => /^Imported /.test(document.querySelector('#notice')?.textContent ?? ''));
  const notice = await page.textContent('#notice');
  assert.match(notice, /^Imported \d+ tasks in \d+ groups over [\d.]+ ms: sched-pipe x2 /);
  const program = field('workload.program');
  assert.match(await page.inputValue(program), /"sched-pipe-\d+"/, 'the replay\'s tasks are the workload');
  assert.equal(await page.$('#trace-reading'), null, 'no reading line once done');
  await screenshot(page, 'trace-imported');
  const results = await runToEnd(page);
  assert.ok(results.rows[0].values[results.variants[0]] > 0);

  // Dropped on the panel, a file that is no trace is refused at the field, in words.
  const dropped = await page.evaluateHandle(() => {
    const dt = new DataTransfer();
    dt.items.add(new File(['hello\n'], 'notes.txt', { type: 'text/plain' }));
    return dt;
  });
  await page.dispatchEvent('#workload-panel', 'drop', { dataTransfer: dropped });
  const refused = await page.waitForSelector(`label:has(${field('workload.trace')}) .field-error`);
  assert.match(await refused.textContent(), /^notes\.txt: no scheduler events in 1 lines/);
  assert.match(await page.inputValue(program), /"sched-pipe-\d+"/, 'a refused file changes nothing');
  assert.deepEqual(errors, []);
  await page.close();
});
