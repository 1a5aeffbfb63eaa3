// The operators' console in a real browser: Debian's headless Chromium driven by playwright-core,
// against the stack `make test` runs (GATEWAY_URL). A tenant of its own (browser-console): its
// engine (CONSOLE_ENGINE_JWT) asks a 2-of-2 approval and a question in one run and subscribes a
// receiver on 127.0.0.1 to its events; alice (CONSOLE_ALICE_JWT) votes. olga, an operator, signs
// in at the local identity provider and reads what waits and the run's story, at desktop and
// phone widths (axe finds nothing), resends a delivery and cancels the run; a cancel without
// the form's CSRF value ends nothing; mallory, no operator, sees nothing of the tenant; olga
// signed in to another tenant cannot read the run. The screenshots of docs/operations.md are written
// under .local/screenshots/ (console-*.png; docs/ holds the copies it shows).
//
//   CONSOLE_ENGINE_JWT=... CONSOLE_ALICE_JWT=... GATEWAY_URL=http://127.0.0.1:3000 node --test infra/local/browser/console.test.mjs
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:http';
import { randomUUID } from 'node:crypto';
import { chromium } from 'playwright-core';

const require = createRequire(import.meta.url);
const gateway = process.env.GATEWAY_URL ?? 'http://127.0.0.1:3000';
const engine = process.env.CONSOLE_ENGINE_JWT;
const alice = process.env.CONSOLE_ALICE_JWT;
const shots = new URL('../../../.local/screenshots/', import.meta.url).pathname;
const chromiumPath = process.env.CHROMIUM ?? '/usr/bin/chromium';

let browser;
let receiver;
let received = 0;

before(async () => {
  assert.ok(engine && alice, 'CONSOLE_ENGINE_JWT (interrupts:write, runs:read, subscriptions:manage, contacts:manage) and CONSOLE_ALICE_JWT (approvals:respond), of one tenant (make test sets them)');
  mkdirSync(shots, { recursive: true });
  browser = await chromium.launch({ executablePath: chromiumPath, args: ['--no-sandbox'] });
  receiver = createServer((req, res) => { req.resume(); req.on('end', () => { received++; res.end('ok'); }); });
  await new Promise((ok) => receiver.listen(0, '127.0.0.1', ok));
});

after(async () => {
  await browser?.close();
  receiver?.close();
});

async function api(method, path, body, bearer = engine) {
  const res = await fetch(gateway + path, {
    method,
    headers: { Authorization: `Bearer ${bearer}`, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  assert.ok(res.status < 300, `${method} ${path}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : undefined;
}

const tenantOf = (jwt) => JSON.parse(Buffer.from(jwt.split('.')[1], 'base64url').toString()).tenant;

// signIn answers the local identity provider's login form, where the console leads a browser
// without a session, as user of tenant.
async function signIn(page, user, tenant) {
  await page.getByLabel('User').selectOption(user);
  await page.getByLabel('Tenant').fill(tenant);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL((u) => u.pathname.startsWith('/console'));
}

// until reloads page until ready says what it waits for is on it (the console reads read models
// and deliveries, which follow the table's stream), for at most 30 s.
async function until(page, ready, what) {
  for (let i = 0; i < 150; i++) {
    if (await ready()) return;
    await new Promise((r) => setTimeout(r, 200));
    await page.reload();
  }
  assert.fail(`after 30 s the console still lacks ${what}`);
}

async function axe(page) {
  await page.addScriptTag({ path: require.resolve('axe-core/axe.min.js') });
  const { violations } = await page.evaluate(() => globalThis.axe.run(document, { resultTypes: ['violations'] }));
  return violations.map((v) => `${v.id}: ${v.help} (${v.nodes.length})`);
}

const noSidewaysScroll = (page) => page.evaluate(() => document.documentElement.scrollWidth <= document.documentElement.clientWidth);

test('olga reads what waits and a run\'s story, resends, and cancels it; mallory and another tenant see nothing', async () => {
  const tenant = tenantOf(engine);
  const run = 'invoice-4471-' + randomUUID().slice(0, 6);
  const title = 'Pay invoice 4471 to ACME GmbH';
  for (const s of (await api('GET', '/subscriptions')).subscriptions ?? []) await api('DELETE', `/subscriptions/${s.id}`);
  await api('POST', '/subscriptions', { url: `http://127.0.0.1:${receiver.address().port}/hooks`, events: ['*'] });
  await api('PUT', '/contacts/principal/bob', { email: 'bob@example.com', name: 'Bob Martin' });
  await api('POST', `/runs/${run}/interrupts`, {
    nodeId: 'approve-payment',
    payload: {
      kind: 'approval', key: 'approve-4471', timeoutMs: 86_400_000,
      data: {
        artifactId: 'inv-4471', artifactType: 'invoice', title,
        artifactData: { supplier: 'ACME GmbH', amount: 12400, currency: 'EUR', lines: [{ sku: 'A-1', qty: 2, price: 6200 }] },
        actions: ['accept', 'reject'], requiredApprovals: 2, approversList: ['alice', 'bob'],
      },
    },
  });
  await api('POST', `/runs/${run}/interrupts`, {
    nodeId: 'cost-centre',
    payload: { kind: 'clarification', key: 'cost-centre-4471', data: { questions: [{ id: 'cc', question: 'Which cost centre pays invoice 4471?' }] } },
    display: { audience: ['carol'] },
  });
  await api('POST', `/runs/${run}/interrupts/approve-payment`, { resumeValue: { action: 'accept', decidedAt: new Date().toISOString(), feedback: 'Within the Q4 budget.' } }, alice);

  // Desktop: olga signs in, and the list shows the run, waiting on bob by his contact's name.
  const desk = await browser.newContext({ bypassCSP: true, viewport: { width: 1280, height: 900 } });
  const page = await desk.newPage();
  const first = await page.goto(`${gateway}/console`);
  assert.equal(new URL(page.url()).pathname, '/local-issuer/authorize', 'the console asks for a sign-in first');
  assert.equal(first.status(), 200);
  await signIn(page, 'olga', tenant);
  await until(page, async () => (await page.getByRole('link', { name: title }).count()) > 0, title);
  // The list says the inboxes it is filed in (alice's too: she voted, and it stays listed there
  // as voted); the run's page, below, whom it still waits on. Each name or id inside the
  // console's words is isolated, between U+2068 FIRST STRONG ISOLATE and U+2069 POP
  // DIRECTIONAL ISOLATE (pkg/words), which the page's text holds.
  await assert.doesNotReject(page.getByText(/Waits on \u2068alice\u2069, \u2068Bob Martin\u2069 \(\u2068bob\u2069\) · 1 of 2 approvals/).waitFor());
  await assert.doesNotReject(page.getByText('Which cost centre pays invoice 4471?').first().waitFor());
  assert.equal(await page.locator('script').count(), 0, 'the console has a script');
  assert.deepEqual(await axe(page), []);
  await page.reload();
  await page.screenshot({ path: shots + 'console-list.png', fullPage: true });

  // The run's page: the approval, alice's vote and comment, that it waits on bob; the question.
  await page.getByRole('link', { name: title }).click();
  await page.waitForURL((u) => u.pathname === `/console/runs/${run}`);
  await assert.doesNotReject(page.getByText('\u2068alice\u2069 voted accept: “\u2068Within the Q4 budget.\u2069”').waitFor());
  await assert.doesNotReject(page.getByText('Waits on \u2068Bob Martin\u2069 (\u2068bob\u2069) · 1 of 2 approvals').waitFor());
  await assert.doesNotReject(page.getByText('Waits on \u2068carol\u2069').waitFor());
  await until(page, async () => (await page.getByRole('button', { name: 'Resend' }).count()) >= 3, 'the run\'s deliveries');
  assert.deepEqual(await axe(page), []);
  await page.reload();
  await page.screenshot({ path: shots + 'console-run.png', fullPage: true });

  // Phone: both pages usable at 390 px, without sideways scrolling, and axe finds nothing.
  const phone = await browser.newContext({ bypassCSP: true, viewport: { width: 390, height: 844 } });
  await phone.addCookies(await desk.cookies());
  const small = await phone.newPage();
  for (const [path, file] of [['/console', 'console-list-phone.png'], [`/console/runs/${run}`, 'console-run-phone.png']]) {
    const res = await small.goto(gateway + path);
    assert.equal(res.status(), 200, path);
    assert.ok(await noSidewaysScroll(small), `no sideways scrolling at 390 px: ${path}`);
    await small.screenshot({ path: shots + file, fullPage: true });
    assert.deepEqual(await axe(small), [], path);
  }
  await phone.close();

  // A cancel posted without the form's CSRF value (another site's form) ends nothing.
  const session = (await desk.cookies()).find((c) => c.name === '__Host-ih-session');
  const forged = await fetch(`${gateway}/console/runs/${run}/cancel`, {
    method: 'POST', redirect: 'manual',
    headers: { Cookie: `${session.name}=${session.value}`, 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ reason: 'forged' }).toString(),
  });
  assert.equal(forged.status, 403);
  const log = async () => (await api('GET', `/runs/${run}/events`)).events;
  assert.ok(!(await log()).some((e) => e.type === 'run.cancelled'), 'a forged cancel ended the run');

  // Resend a delivery: the receiver gets it again, and the page lists the resent attempt.
  const before = received;
  await Promise.all([
    page.waitForResponse((r) => r.url().endsWith(`/console/runs/${run}/resend`) && r.status() === 303),
    page.getByRole('button', { name: 'Resend' }).first().click(),
  ]);
  await assert.doesNotReject(page.getByText('(resent)').first().waitFor());
  assert.ok(received > before, 'the receiver got nothing from the resend');

  // Cancel with a reason: recorded as olga's, the page says so and offers no end form.
  await page.getByLabel('Why cancel it').fill('Duplicate of invoice 4470, paid on Monday.');
  await page.getByRole('button', { name: 'Cancel the run' }).click();
  await page.waitForURL((u) => u.pathname === `/console/runs/${run}`);
  await assert.doesNotReject(page.getByText('\u2068olga\u2069 cancelled the run').waitFor());
  await assert.doesNotReject(page.locator('blockquote', { hasText: 'Duplicate of invoice 4470, paid on Monday.' }).waitFor());
  assert.equal(await page.getByRole('button', { name: 'Cancel the run' }).count(), 0);
  const cancelled = (await log()).find((e) => e.type === 'run.cancelled');
  assert.deepEqual(cancelled.payload, { by: 'olga', reason: 'Duplicate of invoice 4470, paid on Monday.' });
  await desk.close();

  // mallory of the same tenant, no operator: 403, and nothing of the tenant.
  const other = await browser.newContext();
  const m = await other.newPage();
  await m.goto(`${gateway}/console/runs/${run}`);
  await signIn(m, 'mallory', tenant);
  const refused = await m.reload();
  assert.equal(refused.status(), 403);
  const body = await m.content();
  assert.ok(!body.includes(run) && !body.includes('4471'), 'the refusal shows something of the tenant');
  await assert.doesNotReject(m.getByText('signed in as \u2068mallory\u2069').waitFor());
  await other.close();

  // olga signed in to another tenant: no such run.
  const elsewhere = await browser.newContext();
  const o = await elsewhere.newPage();
  await o.goto(`${gateway}/console/runs/${run}`);
  await signIn(o, 'olga', tenant + '-other');
  const missing = await o.reload();
  assert.equal(missing.status(), 404);
  assert.ok(!(await o.content()).includes('ACME'), 'another tenant reads the run');
  await elsewhere.close();
});
