// The playground's pictures and polish: charts drawn from the results, the
// machine drawing and timeline, explanations that follow the counters,
// exports, the help overlay, themes, and layouts from 1366x768 to 2560x1440.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { useBrowser, openPage, runToEnd, screenshot, field } from './harness.mjs';

const env = useBrowser();


/** The data markers of a chart, in drawing order: where, and what they say. */
const markers = (page, chart) =>
  page.$$eval(`#chart-${chart} svg .marker`, (ms) => ms.map((m) => {
    const [x, y] = m.getAttribute('transform').match(/-?[\d.]+/g).map(Number);
    return { x, y, variant: m.dataset.variant, value: Number(m.dataset.value), label: m.getAttribute('aria-label') };
  }));

/** Pixels are a linear function of the data: fit on the extremes, check all. */
function assertLinear(pixels, values, what) {
  assert.equal(pixels.length, values.length, `${what}: a marker per value`);
  const lo = values.indexOf(Math.min(...values));
  const hi = values.indexOf(Math.max(...values));
  if (values[hi] === values[lo]) return;
  const scale = (pixels[hi] - pixels[lo]) / (values[hi] - values[lo]);
  values.forEach((v, i) => {
    const expected = pixels[lo] + (v - values[lo]) * scale;
    assert.ok(Math.abs(pixels[i] - expected) <= 1.5, `${what}: point ${i} at ${pixels[i]}, expected ${expected}`);
  });
}

test('the flip timeline is charted per batch from the results, with the flips marked', async () => {
  const { page, errors } = await openPage(env.browser, `${env.server.url}#preset=retune-pipe-test-flip`);
  const results = await runToEnd(page);
  const series = results.rows[0].series.flip;
  const points = await markers(page, 'series');
  assertLinear(points.map((p) => p.y), series, 'usecs/loop');
  assertLinear(points.map((p) => p.x), series.map((_, i) => i + 1), 'batch');
  const text = await page.textContent('#chart-series > svg');
  assert.match(text, /\+WAKE_AFFINE on domain0\+domain1/);
  assert.match(text, /usecs\/loop \(us\)/);
  assert.match(text, /batch/);
  // The drop where WAKE_AFFINE flips is in the drawing: later batches sit lower (larger y).
  assert.ok(points[series.length - 1].y > points[0].y + 50);
  assert.deepEqual(errors, []);
  await page.close();
});

test('a repeated sweep draws both variants against the sweep value with error bars, and the change beside it', async () => {
  const { page, errors } = await openPage(env.browser, `${env.server.url}#preset=kvm-pipe-test-pinning`);
  await page.selectOption(field('sweep.param'), 'loops');
  await page.fill(field('sweep'), '500, 1000, 2000, 4000');
  await page.fill(field('repeats'), '2');
  const results = await runToEnd(page);
  let points = await markers(page, 'sweep');
  const [a, b] = results.variants;
  const values = [...results.rows.map((r) => r.values[a]), ...results.rows.map((r) => r.values[b])];
  assertLinear(points.map((p) => p.y), values, 'metric');
  // Doubling values: a log-2 axis, chosen by itself.
  const xs = [500, 1000, 2000, 4000];
  assertLinear(points.map((p) => p.x), [...xs, ...xs].map(Math.log2), 'sweep value (log2)');
  assert.equal(await page.isChecked('#log-x'), true);
  assert.equal(await page.$$eval('#chart-sweep svg .error-bar', (c) => c.length), 8, 'an error bar per point');
  const text = await page.textContent('#chart-sweep > svg');
  for (const word of [a, b, 'loops (log₂ scale)', 'usecs/loop (us)']) assert.ok(text.includes(word), word);
  // The change chart: B against A in percent per sweep value, as the table says.
  const change = await markers(page, 'change');
  assert.equal(change.length, 4);
  results.rows.forEach((r, i) => {
    const pct = (r.values[b] / r.values[a] - 1) * 100;
    assert.ok(Math.abs(change[i].value - pct) < 0.006, `${change[i].value} vs ${pct}`);
  });
  // The exact value on focus and on hover.
  await page.focus('#chart-sweep .marker >> nth=5');
  assert.match(await page.textContent('#chart-sweep .readout'), new RegExp(`^${b} at loops 1000: \\d`));
  await page.hover('#chart-change .marker >> nth=0');
  assert.match(await page.textContent('#chart-change .readout'), new RegExp(`^${b} against ${a} at loops 500: [+-]\\d+\\.\\d\\d%`));
  // Switched to linear, the same points sit by value.
  await page.uncheck('#log-x');
  points = await markers(page, 'sweep');
  assertLinear(points.map((p) => p.x), [...xs, ...xs], 'sweep value (linear)');
  assert.deepEqual(errors, []);
  await page.close();
});

test('the drawing shows every CPU and hovering one shows its domain spans; the timeline draws both variants', async () => {
  const { page, errors } = await openPage(env.browser, `${env.server.url}#preset=waweight-tbench`);
  assert.equal(await page.$$eval('#machine-drawing .cpu', (c) => c.length), 40);
  assert.equal(await page.$$eval('#machine-drawing .node', (c) => c.length), 2);
  await page.hover('#machine-drawing .cpu[data-cpu="0"]');
  const spans = await page.$$eval('#domain-spans li', (li) => li.map((l) => l.textContent));
  assert.deepEqual(spans.map((s) => s.split(' ')[0]), ['SMT', 'MC', 'NUMA']);
  assert.match(spans[0], /CPUs 0,20 \(2\)/);
  assert.equal(await page.$$eval('#machine-drawing .cpu[data-level="0"]', (c) => c.length), 2);
  // Keyboard users get the same: focusing a CPU shows its spans.
  await page.focus('#machine-drawing .cpu[data-cpu="21"]');
  assert.match(await page.textContent('#domain-spans li'), /SMT CPUs 1,21 \(2\)/);
  // The drawing follows the builder.
  await page.click('#machine-edit');
  await page.fill(field('machine.threads_per_core'), '1');
  await page.waitForFunction(() => document.querySelectorAll('#machine-drawing .cpu').length === 20);
  await page.close();

  const { page: p2, errors: errors2 } = await openPage(env.browser, `${env.server.url}#preset=kvm-pipe-test-pinning`);
  await runToEnd(p2);
  const blocks = await p2.$$eval('#timeline .timeline-block', (bs) => bs.map((b) => ({
    label: b.dataset.variantLabel,
    slices: b.querySelectorAll('rect.slice').length,
    wakeups: b.querySelectorAll('polygon.wakeup').length,
  })));
  assert.deepEqual(blocks.map((b) => b.label), ['pinned', 'free']);
  for (const b of blocks) assert.ok(b.slices > 5 && b.wakeups > 5, JSON.stringify(b));
  assert.deepEqual([...errors, ...errors2], []);
  await p2.close();
});

test('the explanation follows the counters: WAKE_AFFINE at NODE in B changes it', async () => {
  const { page, errors } = await openPage(env.browser, `${env.server.url}#preset=retune-lat-ctx`);
  await page.click('#copy-a-to-b');
  await runToEnd(page);
  const alike = await page.textContent('#explanation');
  assert.match(alike, /placed wakeups alike/);
  await page.click(field('v1.NODE.WAKE_AFFINE'));
  await runToEnd(page);
  const after = await page.textContent('#explanation');
  assert.notEqual(after, alike);
  assert.match(after, /^2\.6\.28 woke \d+% of wakees on the waker's own CPU; wake_affine pulled wakees .* NODE/);
  assert.match(after, /2\.6\.27 woke 100% of them on another CPU \(100% on another node\), sending an IPI/);
  assert.deepEqual(errors, []);
  await page.close();
});

test('with three variants, each later one is explained against the first', async () => {
  const { page, errors } = await openPage(env.browser, `${env.server.url}#preset=retune-lat-ctx`);
  await page.click('#add-variant');
  const results = await runToEnd(page);
  assert.equal(results.variants.length, 3);
  const items = await page.$$eval('#explanation li', (li) => li.map((l) => l.textContent));
  assert.equal(items.length, 2);
  const [a, b, c] = results.variants;
  assert.ok(items[0].includes(a) && items[0].includes(b), items[0]);
  assert.ok(items[1].includes(a) && items[1].includes(c), items[1]);
  assert.equal(await page.$$eval('#chart-change .marker', (m) => m.length), 2, 'B and C against A');
  assert.deepEqual(errors, []);
  await page.close();
});

test('charts export as SVG and as a PNG that decodes at the chart size; the trace exports for Perfetto', async () => {
  const { page, errors } = await openPage(env.browser, `${env.server.url}#preset=kvm-pipe-test-pinning`);
  await runToEnd(page);
  const save = async (selector) => {
    const [d] = await Promise.all([page.waitForEvent('download'), page.click(selector)]);
    return { name: d.suggestedFilename(), bytes: await readFile(await d.path()) };
  };
  const svg = await save('#chart-variants [data-export="svg"]');
  assert.equal(svg.name, 'kvm-pipe-test-pinning-variants.svg');
  assert.match(svg.bytes.toString(), /^<svg [^>]*width="720" height="360"/);
  const png = await save('#chart-variants [data-export="png"]');
  assert.deepEqual([...png.bytes.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  const size = await page.evaluate(async (b64) => {
    const img = new Image();
    img.src = `data:image/png;base64,${b64}`;
    await img.decode();
    return [img.naturalWidth, img.naturalHeight];
  }, png.bytes.toString('base64'));
  assert.deepEqual(size, [720, 360]);

  const trace = JSON.parse((await save('#download-trace')).bytes.toString());
  const events = trace.traceEvents;
  const named = new Set(events.filter((e) => e.ph === 'M' && e.name === 'thread_name').map((e) => `${e.pid}/${e.tid}`));
  const processes = new Set(events.filter((e) => e.ph === 'M' && e.name === 'process_name').map((e) => e.pid));
  const last = new Map();
  let slices = 0;
  for (const e of events.filter((x) => x.ph !== 'M')) {
    const track = `${e.pid}/${e.tid}`;
    assert.ok(named.has(track) && processes.has(e.pid), `track ${track} is named`);
    assert.ok(['X', 'i'].includes(e.ph));
    if (e.ph === 'X') {
      assert.ok(e.dur >= 0, 'every slice is closed');
      slices += 1;
    }
    assert.ok(e.ts >= (last.get(track) ?? -Infinity), 'timestamps ordered per track');
    last.set(track, e.ts);
  }
  assert.ok(slices > 10);
  assert.equal(processes.size, 2, 'a process per variant');
  assert.deepEqual(errors, []);
  await page.close();
});

test('nothing moves while a run goes: the last results stay, dimmed', async () => {
  const { page, errors } = await openPage(env.browser, `${env.server.url}#preset=retune-lat-ctx`);
  await runToEnd(page);
  await page.fill(field('workload.rounds'), '400000');
  const boxes = () => page.$$eval('#results, #machine-panel, #workload-panel, #kernel-panel, #run-status',
    (els) => els.map((e) => { const r = e.getBoundingClientRect(); return [e.id, Math.round(r.top + window.scrollY), Math.round(r.height)]; }));
  const idle = await boxes();
  await page.click('button#run');
  await page.waitForSelector('#run-status progress:not(.idle)');
  assert.ok(await page.$('.stale #results'), 'the previous results are shown dimmed');
  assert.deepEqual(await boxes(), idle);
  await page.keyboard.press('Escape');
  assert.match(await page.textContent('#run-status'), /^cancelled/);
  assert.deepEqual(errors, []);
  await page.close();
});

test('the gallery opens any preset in one click', async () => {
  const { page, errors } = await openPage(env.browser, env.server.url);
  assert.ok(await page.$eval('#gallery', (d) => d.open), 'open on a first visit');
  const cards = await page.$$eval('#gallery .card', (cs) => cs.map((c) => c.dataset.preset));
  assert.equal(cards.length, 20);
  assert.ok(['rtapp-periodic-desktop', 'schbench-desktop', 'rt-audio-desktop'].every((c) => cards.includes(c)), 'the workload cards');
  await page.click('#gallery .card[data-preset="waweight-tbench"]');
  assert.equal(await page.inputValue('#preset'), 'waweight-tbench');
  assert.match(await page.textContent('#gallery .card.current'), /sched\/fair: the WA_WEIGHT wake-affine heuristic/);
  assert.deepEqual(errors, []);
  await page.close();
});

test('help overlay and theme toggle work from the keyboard', async () => {
  const { page, errors } = await openPage(env.browser, env.server.url);
  await page.keyboard.press('?');
  assert.ok(await page.isVisible('#help'));
  assert.match(await page.textContent('#help'), /Ctrl\+Enter/);
  await page.keyboard.press('Escape');
  assert.equal(await page.$('#help'), null);
  const theme = () => page.$eval('html', (h) => h.dataset.theme);
  assert.equal(await theme(), 'system');
  await page.keyboard.press('t');
  assert.equal(await theme(), 'light');
  await page.click('#theme');
  assert.equal(await theme(), 'dark');
  // Typing a "t" into a field is typing, not a shortcut.
  await page.fill(field('v0.label'), 'at');
  assert.equal(await theme(), 'dark');
  assert.deepEqual(errors, []);
  await page.close();
});

for (const [width, height] of [[1366, 768], [2560, 1440]]) {
  for (const scheme of ['light', 'dark']) {
    test(`${width}x${height} ${scheme}: no horizontal overflow, screenshot saved`, async () => {
      const context = await env.browser.newContext({ viewport: { width, height }, colorScheme: scheme });
      const { page, errors } = await openPage(env.browser, `${env.server.url}#preset=waweight-netperf-tcp-rr`, { context, viewport: { width, height } });
      await page.fill(field('workload.duration_ms'), '20');
      await page.fill(field('workload.warmup_ms'), '5');
      await runToEnd(page);
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      assert.ok(overflow <= 0, `page is ${overflow}px wider than the window`);
      const bg = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
      assert.equal(bg === 'rgb(18, 21, 26)', scheme === 'dark', bg);
      await page.evaluate(() => window.scrollTo(0, 0));
      await screenshot(page, `playground-${width}x${height}-${scheme}`, { fullPage: false });
      await screenshot(page, `playground-${width}x${height}-${scheme}-full`);
      assert.deepEqual(errors, []);
      await context.close();
    });
  }
}


test('runs are kept with what changed; a pinned baseline is drawn and tabled under later runs', async () => {
  const context = await env.browser.newContext();
  const { page, errors } = await openPage(env.browser, `${env.server.url}#preset=retune-lat-ctx`, { context });
  await runToEnd(page);
  await page.click(field('v1.NODE.WAKE_AFFINE'));
  const second = await runToEnd(page);
  const b = second.variants[1];
  const items = () => page.$$eval('#history li', (li) => li.map((l) => ({ run: l.dataset.run, text: l.textContent })));
  let list = await items();
  assert.deepEqual(list.map((l) => l.run), ['2', '1'], 'newest first');
  assert.match(list[0].text, new RegExp(`${b}: -WAKE_AFFINE on NODE`));
  await page.click('#history li[data-run="1"] button[aria-pressed]');
  assert.equal(await page.getAttribute('#history li[data-run="1"] button[aria-pressed]', 'aria-pressed'), 'true');
  assert.ok(await page.$('#chart-variants .baseline'), 'the baseline is drawn under the bars');
  const table = await page.textContent('#baseline-table');
  assert.match(table, /Against the baseline, run 1/);
  assert.match(table, /[+-]\d+\.\d\d% (win|loss)|same/);
  // Kept across a reload, with the pin.
  await page.reload();
  await page.waitForSelector('#app[data-ready="true"]');
  list = await items();
  assert.equal(list.length, 2);
  assert.ok(await page.$('#history li.pinned[data-run="1"]'));
  // Open brings an earlier run's experiment back into the editor.
  await page.click('#history li[data-run="1"] button[aria-label="Open run 1 in the editor"]');
  assert.equal(await page.isChecked(field('v1.NODE.WAKE_AFFINE')), true);
  await page.click('#clear-history');
  assert.equal(await page.$('#history'), null);
  assert.deepEqual(errors, []);
  await context.close();
});
