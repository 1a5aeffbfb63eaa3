// The console's list of every run in a real browser: Debian's headless Chromium driven by
// playwright-core, against the stack `make test` runs (GATEWAY_URL), in the console's tenant
// (CONSOLE_ENGINE_JWT; its runs here carry words of their own, so the other console test's runs
// in the tenant change nothing). olga signs in at the list, cancels a run from its page, and
// finds it again in /console/runs by its status and by a word of its title, not the run that
// still waits; then pages across more runs than a page holds, each run once; at desktop and
// phone widths axe finds nothing and nothing scrolls sideways. The screenshots of
// docs/operations.md are written under .local/screenshots/ (console-runs*.png; docs/ holds the
// copies it shows).
//
//   CONSOLE_ENGINE_JWT=... GATEWAY_URL=http://127.0.0.1:3000 node --test infra/local/browser/console-runs.test.mjs
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { randomUUID } from 'node:crypto';
import { chromium } from 'playwright-core';

const require = createRequire(import.meta.url);
const gateway = process.env.GATEWAY_URL ?? 'http://127.0.0.1:3000';
const engine = process.env.CONSOLE_ENGINE_JWT;
const shots = new URL('../../../.local/screenshots/', import.meta.url).pathname;
const chromiumPath = process.env.CHROMIUM ?? '/usr/bin/chromium';

let browser;

before(async () => {
  assert.ok(engine, 'CONSOLE_ENGINE_JWT (interrupts:write, runs:read) of the console\'s tenant (make test sets it)');
  mkdirSync(shots, { recursive: true });
  browser = await chromium.launch({ executablePath: chromiumPath, args: ['--no-sandbox'] });
});

after(async () => {
  await browser?.close();
});

async function api(method, path, body) {
  const res = await fetch(gateway + path, {
    method,
    headers: { Authorization: `Bearer ${engine}`, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  assert.ok(res.status < 300, `${method} ${path}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : undefined;
}

const tenantOf = (jwt) => JSON.parse(Buffer.from(jwt.split('.')[1], 'base64url').toString()).tenant;

// word is a word no other run's title holds: letters only, so that the search reads it whole.
const word = () => 'w' + randomUUID().replace(/[^a-f]/g, '').slice(0, 10);

const approval = (key, title) => ({
  nodeId: 'approve',
  payload: { kind: 'approval', key, data: { artifactId: key, artifactType: 'invoice', title, actions: ['accept', 'reject'], approversList: ['alice'] } },
});

// until reloads page until ready says what it waits for is on it (the list reads the runs index,
// which follows the table's stream), for at most 30 s.
async function until(page, ready, what) {
  for (let i = 0; i < 150; i++) {
    if (await ready()) return;
    await new Promise((r) => setTimeout(r, 200));
    await page.reload();
  }
  assert.fail(`after 30 s the list still lacks ${what}`);
}

async function axe(page) {
  await page.addScriptTag({ path: require.resolve('axe-core/axe.min.js') });
  const { violations } = await page.evaluate(() => globalThis.axe.run(document, { resultTypes: ['violations'] }));
  return violations.map((v) => `${v.id}: ${v.help} (${v.nodes.length})`);
}

const noSidewaysScroll = (page) => page.evaluate(() => document.documentElement.scrollWidth <= document.documentElement.clientWidth);

// runsListed are the run ids the list's page links.
const runsListed = (page) => page.locator('ul.runs h3 a').evaluateAll((as) => as.map((a) => decodeURIComponent(a.getAttribute('href').replace(/^runs\//, ''))));

test('olga cancels a run and finds it in every run by its status and a word of its title, and pages across more runs than a page', async () => {
  const tenant = tenantOf(engine);
  const mark = word();
  const id = randomUUID().slice(0, 6);
  const cancelled = `pay-${mark}-${id}`;
  const waiting = `ship-${mark}-${id}`;
  await api('POST', `/runs/${cancelled}/interrupts`, approval('pay', `Pay invoice 4471 ${mark}`));
  await api('POST', `/runs/${waiting}/interrupts`, approval('ship', `Ship order 7 ${mark}`));

  // olga opens the list without a session: the sign-in brings her back to it, search and all.
  const desk = await browser.newContext({ bypassCSP: true, viewport: { width: 1280, height: 900 } });
  const page = await desk.newPage();
  await page.goto(`${gateway}/console/runs?q=${mark}`);
  assert.equal(new URL(page.url()).pathname, '/local-issuer/authorize', 'the list asks for a sign-in first');
  await page.getByLabel('User').selectOption('olga');
  await page.getByLabel('Tenant').fill(tenant);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL((u) => u.pathname === '/console/runs' && u.searchParams.get('q') === mark);
  await until(page, async () => (await runsListed(page)).length === 2, `the two runs of ${mark}`);

  // She cancels one from its page.
  await page.getByRole('link', { name: `Pay invoice 4471 ${mark}` }).click();
  await page.waitForURL((u) => u.pathname === `/console/runs/${cancelled}`);
  await page.getByLabel('Why cancel it').fill('Paid by hand.');
  await page.getByRole('button', { name: 'Cancel the run' }).click();
  await assert.doesNotReject(page.getByText('\u2068olga\u2069 cancelled the run').waitFor());

  // Every run, cancelled, a word of its title: that run, not the one that waits.
  await page.getByRole('link', { name: 'Every run' }).click();
  await page.waitForURL((u) => u.pathname === '/console/runs');
  await page.getByLabel('Run id or words of a title').fill(`invoice ${mark}`);
  await page.getByLabel('Status').selectOption('cancelled');
  await page.getByRole('button', { name: 'Show' }).click();
  await page.waitForURL((u) => u.searchParams.get('status') === 'cancelled');
  await until(page, async () => (await runsListed(page)).includes(cancelled), `${cancelled} as cancelled`);
  assert.deepEqual(await runsListed(page), [cancelled]);
  await assert.doesNotReject(page.locator('ul.runs').getByText('Cancelled', { exact: true }).waitFor());
  assert.equal(await page.locator('script').count(), 0, 'the list has a script');
  assert.deepEqual(await axe(page), []);
  await page.reload();
  await page.screenshot({ path: shots + 'console-runs.png', fullPage: true });

  // What waits is found by its own status, and the pending search of the cancelled run leads
  // to every run.
  await page.goto(`${gateway}/console/runs?status=waiting&q=${mark}`);
  assert.deepEqual(await runsListed(page), [waiting]);
  await page.goto(`${gateway}/console?run=${cancelled}`);
  await page.getByRole('link', { name: 'Find it among every run' }).click();
  await page.waitForURL((u) => u.pathname === '/console/runs');
  assert.deepEqual(await runsListed(page), [cancelled]);

  // More runs than a page: two pages, each run once.
  const batch = word();
  const many = Array.from({ length: 55 }, (_, i) => `routine-${batch}-${String(i).padStart(2, '0')}`);
  for (let i = 0; i < many.length; i += 8) {
    await Promise.all(many.slice(i, i + 8).map((run) => api('POST', `/runs/${run}/interrupts`, approval('check', `Routine check ${batch}`))));
  }
  await page.goto(`${gateway}/console/runs?q=${batch}`);
  await until(page, async () => (await runsListed(page)).length === 50 && (await page.getByRole('link', { name: 'Next page' }).count()) === 1, 'a full first page');
  const seen = await runsListed(page);
  await page.getByRole('link', { name: 'Next page' }).click();
  await until(page, async () => (await runsListed(page)).length === 5, 'the second page');
  seen.push(...(await runsListed(page)));
  assert.deepEqual([...seen].sort(), many, 'the pages list each run once');
  assert.equal(await page.getByRole('link', { name: 'Next page' }).count(), 0);

  // Phone: the list usable at 390 px, without sideways scrolling, and axe finds nothing.
  const phone = await browser.newContext({ bypassCSP: true, viewport: { width: 390, height: 844 } });
  await phone.addCookies(await desk.cookies());
  const small = await phone.newPage();
  const res = await small.goto(`${gateway}/console/runs?status=cancelled&q=${mark}`);
  assert.equal(res.status(), 200);
  assert.ok(await noSidewaysScroll(small), 'no sideways scrolling at 390 px');
  assert.deepEqual(await axe(small), []);
  await small.screenshot({ path: shots + 'console-runs-phone.png', fullPage: true });
  await phone.close();
  await desk.close();
});
