// The Machine, Kernel and Workload panels: what a person edits changes
// what runs, bad input is caught at the field, runs can be cancelled, and
// the worker pool is sized by the points and the machine's cores.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { useBrowser, openPage, screenshot, runToEnd, cli, field } from './harness.mjs';

const env = useBrowser();


test('a flag changed in B changes B\'s numbers and not A\'s', async () => {
  const { page, errors } = await openPage(env.browser, env.server.url);
  await page.selectOption('#preset', 'retune-lat-ctx');
  const before = await runToEnd(page);
  const [a, b] = before.variants;
  const wakeAffine = field('v1.NODE.WAKE_AFFINE');
  // The re-tune commit turned WAKE_AFFINE on at NODE: A (2.6.27) and B differ there.
  assert.equal(await page.isChecked(wakeAffine), true);
  assert.equal(await page.isChecked(field('v0.NODE.WAKE_AFFINE')), false);
  assert.ok(await page.$(`td.diff ${wakeAffine}`), 'the differing cell is highlighted');
  await page.click(wakeAffine);
  assert.equal(await page.isChecked(wakeAffine), false);
  assert.equal(await page.$(`td.diff ${wakeAffine}`), null, 'equal cells are not highlighted');
  assert.ok(await page.$(`td.changed ${wakeAffine}`), 'a change from the era default is marked');
  assert.match(await page.inputValue('#preset'), /^$/, 'the picker says the experiment is edited');
  const after = await runToEnd(page);
  assert.equal(after.rows[0].values[a], before.rows[0].values[a], 'A is unchanged');
  assert.notEqual(after.rows[0].values[b], before.rows[0].values[b], 'B changed');
  await screenshot(page, 'flag-in-b');
  assert.deepEqual(errors, []);
  await page.close();
});

test('bad values are shown at their field with the core\'s words and block Run', async () => {
  const { page, errors } = await openPage(env.browser, env.server.url);
  await page.selectOption('#preset', 'retune-lat-ctx');
  await page.fill(field('v0.NODE.imbalance_pct'), '50');
  const err = await page.textContent(`td:has(${field('v0.NODE.imbalance_pct')}) .field-error`);
  assert.match(err, /imbalance_pct is 50; it must be 100\.\.=1000/);
  assert.equal(await page.isDisabled('button#run'), true);
  await page.fill(field('workload.procs'), 'two');
  assert.match(await page.textContent(`label:has(${field('workload.procs')}) .field-error`), /"two" is not a whole number/);
  assert.equal(await page.inputValue(field('workload.procs')), 'two', 'the text typed stays');
  await page.fill(field('workload.procs'), '2');
  await page.fill(field('v0.NODE.imbalance_pct'), '125');
  assert.equal(await page.isDisabled('button#run'), false);
  assert.equal(await page.$('.field-error'), null);
  assert.deepEqual(errors, []);
  await page.close();
});

test('a long run can be cancelled, and typing during it echoes at once', async () => {
  const { page, errors } = await openPage(env.browser, env.server.url);
  await page.selectOption('#preset', 'waweight-hackbench-20');
  // Long enough that Cancel comes before the end on any machine.
  await page.fill(field('workload.loops'), '5000');
  await page.click('button#run');
  await page.waitForSelector('#run-status progress:not(.idle)');
  assert.equal(await page.isEnabled('button#cancel'), true);
  await page.fill(field('seed'), '12345');
  assert.equal(await page.inputValue(field('seed')), '12345');
  assert.ok(await page.$('#run-status progress:not(.idle)'), 'still running while the user types');
  await page.click('button#cancel');
  assert.match(await page.textContent('#run-status'), /^cancelled after \d+ of 10 points/);
  assert.equal(await page.isEnabled('button#run'), true);
  await page.waitForTimeout(1000);
  assert.equal(await page.$('#results-table'), null, 'no results arrive after Cancel');
  assert.deepEqual(errors, []);
  await page.close();
});

for (const cores of [4, 8]) {
  test(`a 6-point sweep on ${cores} cores uses ${Math.min(cores, 6)} workers`, async () => {
    const { page, errors } = await openPage(env.browser, env.server.url, { cores });
    await page.selectOption('#preset', 'retune-lat-ctx');
    await page.click('[data-variant="1"] button.icon');
    assert.equal(await page.$$eval('[data-variant]', (v) => v.length), 1);
    await page.fill(field('workload.rounds'), '2000');
    await page.selectOption(field('sweep.param'), 'procs');
    await page.fill(field('sweep'), '2, 3, 4, 5, 6, 7');
    const results = await runToEnd(page);
    assert.deepEqual(results.rows.map((r) => r.x), [2, 3, 4, 5, 6, 7]);
    assert.match(await page.textContent('#run-status'), new RegExp(`done: 6 points on ${Math.min(cores, 6)} workers`));
    assert.deepEqual(errors, []);
    await page.close();
  });
}

/** The page's results are the native CLI's for the page's experiment, byte for byte. */
async function assertCliAgrees(page) {
  const dir = await mkdtemp(path.join(tmpdir(), 'schedlab-'));
  const file = path.join(dir, 'experiment.json');
  try {
    await writeFile(file, await page.textContent('#experiment-json'));
    assert.equal(await page.textContent('#results-json'), cli(['run', file, '--format', 'json']));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

test('a hand-built machine runs, with the native CLI\'s numbers', async () => {
  const { page, errors } = await openPage(env.browser, env.server.url);
  await page.selectOption('#preset', 'kvm-pipe-test-pinning');
  await page.click('#machine-edit');
  await page.fill(field('machine.nodes'), '2');
  await page.fill(field('machine.cores_per_llc'), '2');
  await page.fill(field('machine.threads_per_core'), '2');
  assert.match(await page.textContent('#machine-summary'), /8 CPUs, 2 nodes/);
  await page.fill(field('machine.distances'), '10 21\n21');
  assert.match(await page.textContent('label:has([data-field="machine.distances"]) .field-error'), /must be square/);
  assert.equal(await page.$$eval('#machine-drawing .cpu', (c) => c.length), 8, 'the drawing stays');
  await page.fill(field('machine.distances'), '10 21\n21 10');
  const results = await runToEnd(page);
  assert.ok(results.rows[0].values.free > 0);
  await assertCliAgrees(page);
  await screenshot(page, 'hand-built-machine');
  assert.deepEqual(errors, []);
  await page.close();
});

test('hackbench\'s children\'s exits are typed as a number and run as the CLI runs them', async () => {
  const { page, errors } = await openPage(env.browser, env.server.url);
  await page.selectOption('#preset', 'waweight-hackbench-20');
  await page.fill(field('workload.loops'), '5');
  const without = await runToEnd(page);
  await page.fill(field('workload.exit_us'), 'soon');
  assert.match(await page.textContent(`label:has(${field('workload.exit_us')}) .field-error`), /soon/);
  assert.equal(await page.isDisabled('button#run'), true);
  await page.fill(field('workload.exit_us'), '300');
  assert.equal(await page.$('.field-error'), null);
  assert.match(await page.textContent('#experiment-json'), /"exit_us": 300/);
  const results = await runToEnd(page);
  const [a] = without.variants;
  assert.ok(results.rows[0].values[a] > without.rows[0].values[a], 'exits take time');
  await assertCliAgrees(page);
  await screenshot(page, 'hackbench-exits');
  await page.fill(field('workload.exit_us'), '');
  assert.doesNotMatch(await page.textContent('#experiment-json'), /exit_us/);
  assert.deepEqual(errors, []);
  await page.close();
});

const LSCPU = `# The following is the parsable format, which can be fed to other
# programs. Each different item in every column has an unique ID
# starting from zero.
# CPU,Core,Socket,Node,,L1d,L1i,L2,L3
0,0,0,0,,0,0,0,0
1,1,0,0,,1,1,1,0
2,2,1,1,,2,2,2,1
3,3,1,1,,3,3,3,1
4,0,0,0,,0,0,0,0
5,1,0,0,,1,1,1,0
6,2,1,1,,2,2,2,1
7,3,1,1,,3,3,3,1
`;

test('an lscpu -p import runs (Ctrl+Enter), its JSON downloads, and a broken one is refused at the field', async () => {
  const { page, errors } = await openPage(env.browser, env.server.url);
  await page.selectOption('#preset', 'kvm-pipe-test-pinning');
  await page.click('details.lscpu summary');
  await page.fill('#lscpu-text', '0,0,zero\n');
  await page.click('#lscpu-import');
  assert.match(await page.textContent('details.lscpu .field-error'), /line 1/);
  await page.fill('#lscpu-text', LSCPU);
  await page.click('#lscpu-import');
  assert.match(await page.textContent('#machine-summary'), /8 CPUs, 2 nodes, 2 packages, 2 LLCs, 4 cores, 2 threads\/core/);
  const results = await runToEnd(page, { keyboard: true });
  assert.ok(results.rows[0].values.pinned > 0);
  await page.click('details:has(#results-json) summary');
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#download-json')]);
  const saved = await readFile(await download.path(), 'utf8');
  assert.equal(saved, await page.textContent('#results-json'), 'the downloaded JSON is the shown JSON');
  assert.deepEqual(errors, []);
  await page.close();
});

test('a machine from schedlab calibrate is pasted, or loaded from its file, and runs', async () => {
  const fixture = path.join(path.dirname(new URL(import.meta.url).pathname), 'fixtures', 'calibrated-machine.json');
  const json = await readFile(fixture, 'utf8');
  const cpus = JSON.parse(json).layout.cpus.length;
  const { page, errors } = await openPage(env.browser, env.server.url);
  await page.selectOption('#preset', 'kvm-pipe-test-pinning');
  await page.click('details.lscpu summary');
  await page.fill('#lscpu-text', json);
  await page.click('#lscpu-import');
  assert.equal(await page.$('details.lscpu .field-error'), null);
  assert.match(await page.textContent('#machine-summary'), new RegExp(`: ${cpus} CPUs,`));
  const results = await runToEnd(page);
  assert.ok(results.rows[0].values.pinned > 0);
  // The same machine from its file, after a preset replaced it.
  await page.selectOption('#preset', 'retune-lat-ctx');
  await page.click('details.lscpu summary');
  await page.setInputFiles('#machine-file', fixture);
  await page.waitForFunction((n) => document.querySelector('#machine-summary')?.textContent.includes(`: ${n} CPUs,`), cpus);
  // A machine JSON with a mistake is refused at the field.
  if (!(await page.$eval('details.lscpu', (d) => d.open))) await page.click('details.lscpu summary');
  await page.fill('#lscpu-text', json.replace('"cpus"', '"cpu_list"'));
  await page.click('#lscpu-import');
  assert.ok(await page.$('details.lscpu .field-error'), 'a broken machine file is refused at the field');
  assert.deepEqual(errors, []);
  await page.close();
});

test('a refused value of each kind of field is shown at that field, and only there', async () => {
  const { page, errors } = await openPage(env.browser, env.server.url);
  await page.selectOption('#preset', 'retune-lat-ctx');
  await page.click('#machine-edit');
  await page.click('details.costs summary');
  await page.click('#workload-panel fieldset[data-changes-of="1"] details summary');
  // The text that each field refuses: a number that is not one, an empty
  // label, JSON that does not parse, a range the core refuses.
  const cases = [
    ['machine.nodes', 'x'],
    ['cost.ipi_ns', 'x'],
    ['v1.label', ' '],
    ['v0.NODE.imbalance_pct', '50'],
    ['v0.tunable.sched_migration_cost_ns', 'x'],
    ['workload.procs', 'x'],
    ['v1.workload', '{'],
    ['seed', 'x'],
    ['repeats', 'x'],
  ];
  for (const [name, bad] of cases) {
    const input = field(name);
    const before = await page.inputValue(input);
    await page.fill(input, bad);
    const shown = await page.$$eval('.field-error', (els) =>
      els.map((e) => e.parentElement.querySelector('[data-field]')?.dataset.field));
    assert.deepEqual(shown, [name], `${name}: its error is shown at it, and nowhere else`);
    assert.equal(await page.isDisabled('button#run'), true, `${name}: Run waits`);
    await page.fill(input, before);
    assert.equal(await page.$('.field-error'), null, `${name}: fixed`);
  }
  assert.equal(await page.isDisabled('button#run'), false);
  assert.deepEqual(errors, []);
  await page.close();
});

test('per-variant workload changes are fields: added, typed in taskset syntax, checked at the field, dropped', async () => {
  const { page, errors } = await openPage(env.browser, `${env.server.url}#preset=kvm-pipe-test-pinning`);
  // pinned runs on CPU 0 (the preset); free runs free.
  assert.equal(await page.inputValue(field('v0.workload.affinity')), '0');
  assert.equal(await page.$(field('v1.workload.affinity')), null);
  await page.selectOption('[data-add-change="1"]', 'affinity');
  const aff = field('v1.workload.affinity');
  assert.equal(await page.inputValue(aff), '0', 'a new affinity starts at CPU 0');
  await page.fill(aff, '0-5');
  const err = await page.textContent(`label:has(${aff}) .field-error`);
  assert.match(err, /affinity \(as taskset -c takes it, e\.g\. 0-3,8\): cpulist "0-5": "0-5" is not a range of CPUs 0\.\.=1/);
  assert.equal(await page.isDisabled('button#run'), true);
  await page.fill(aff, '1');
  await page.selectOption('[data-add-change="1"]', 'loops');
  await page.fill(field('v1.workload.loops'), '10000');
  assert.equal(await page.isDisabled('button#run'), false);
  const json = JSON.parse(await page.textContent('#experiment-json'));
  assert.deepEqual(json.variants[1].workload, { affinity: '1', loops: 10000 });
  // The same, as JSON, is still there.
  await page.click('#workload-panel fieldset[data-changes-of="1"] details summary');
  assert.deepEqual(JSON.parse(await page.inputValue(field('v1.workload'))), { affinity: '1', loops: 10000 });
  const results = await runToEnd(page);
  assert.equal(results.variants[1], 'free');
  // Dropped, B runs the benchmark as the base does.
  await page.click('#workload-panel fieldset[data-changes-of="1"] button[aria-label="Drop free\'s change to loops"]');
  await page.click('#workload-panel fieldset[data-changes-of="1"] button[aria-label="Drop free\'s change to affinity"]');
  assert.deepEqual(JSON.parse(await page.textContent('#experiment-json')).variants[1], { label: 'free' });
  assert.deepEqual(errors, []);
  await page.close();
});
