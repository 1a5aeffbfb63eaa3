// The approval page in a real browser: Debian's headless Chromium driven by playwright-core,
// against the stack `make test` runs (GATEWAY_URL), as an approver who opens a link would use
// it: a link holding a token (minted by the team's mailer, DELEGATE_JWT), and a link holding
// none, where the approver signs in with the local identity provider. A screenshot of each
// state is saved under .local/screenshots/ for review.
//
//   ENGINE_JWT=... DELEGATE_JWT=... GATEWAY_URL=http://127.0.0.1:3000 node --test infra/local/browser/
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { randomUUID } from 'node:crypto';
import { chromium } from 'playwright-core';

const require = createRequire(import.meta.url);
const gateway = process.env.GATEWAY_URL ?? 'http://127.0.0.1:3000';
const jwt = process.env.ENGINE_JWT;
const delegateJwt = process.env.DELEGATE_JWT;
const shots = new URL('../../../.local/screenshots/', import.meta.url).pathname;
const chromiumPath = process.env.CHROMIUM ?? '/usr/bin/chromium';

let browser;

before(async () => {
  assert.ok(jwt, 'ENGINE_JWT: a JWT with interrupts:write and runs:read (make test sets it)');
  assert.ok(delegateJwt, 'DELEGATE_JWT: a JWT with tokens:delegate, of the same tenant (make test sets it)');
  mkdirSync(shots, { recursive: true });
  browser = await chromium.launch({ executablePath: chromiumPath, args: ['--no-sandbox'] });
});

after(async () => { await browser?.close(); });

async function api(method, path, body, bearer = jwt) {
  const res = await fetch(gateway + path, {
    method,
    headers: { Authorization: `Bearer ${bearer}`, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  assert.ok(res.status < 300, `${method} ${path}: ${res.status} ${text}`);
  return JSON.parse(text);
}

const title = 'Pay <script>alert("pwned")</script> & ship';

function approval(extra = {}) {
  return {
    kind: 'approval',
    key: 'pay-' + randomUUID(),
    timeoutMs: 3_600_000,
    data: {
      artifactId: 'inv-2026-118',
      artifactType: 'invoice',
      title,
      description: 'Supplier: ACME <b>GmbH</b>\nDue within 14 days.',
      artifactData: { amount: 12400, currency: 'EUR', lines: [{ sku: 'A-1', qty: 2 }] },
      actions: ['accept', 'reject', 'refine', 'edit-accept', 'ask'],
      requiredApprovals: 1,
      approversList: ['alice', 'bob'],
      ...extra,
    },
  };
}

// request suspends a fresh run on payload and has the team's mailer mint a link token for
// principal; plain is the link without a credential, to the page that signs the approver in.
async function request(payload, principal = 'alice', intent = 'resolve') {
  const run = 'browser-' + randomUUID().slice(0, 12);
  const { interruptId } = await api('POST', `/runs/${run}/interrupts`, { nodeId: 'approve', payload });
  const tok = await api('POST', `/runs/${run}/interrupts/approve/tokens`, principal ? { intent, principal } : { intent }, delegateJwt);
  return { run, url: `${gateway}/approve/${tok.token}`, plain: `${gateway}/approve/${run}/${interruptId}` };
}

// signIn answers the local identity provider's login form, where a link without a credential
// leads, as user of tenant, and waits for the page the sign-in came back to.
async function signIn(page, user, tenant) {
  await page.getByLabel('User').selectOption(user);
  await page.getByLabel('Tenant').fill(tenant);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL((u) => u.pathname.startsWith('/approve/'));
}

async function events(run) {
  return (await api('GET', `/runs/${run}/events`)).events;
}

// open loads a page in a fresh context that records any dialog (a script that ran), any page
// error and any console error but the browser's note of a page answered with an error status
// (the pages of a decided or refused link are).
async function open(url, viewport = { width: 1100, height: 900 }) {
  const context = await browser.newContext({ viewport });
  const page = await context.newPage();
  const problems = [];
  page.on('dialog', (d) => { problems.push('a dialog opened: ' + d.message()); d.dismiss(); });
  page.on('console', (m) => {
    if (m.type() === 'error' && !m.text().startsWith('Failed to load resource: the server responded with a status of')) problems.push('console: ' + m.text());
  });
  page.on('pageerror', (e) => problems.push('page error: ' + e.message));
  const res = await page.goto(url);
  return { context, page, res, problems };
}

test('an approver opens the link, reads the approval as text, and accepts', async () => {
  const { run, url } = await request(approval());
  const { context, page, res, problems } = await open(url);
  assert.equal(res.status(), 200);
  assert.equal(res.headers()['x-frame-options'], 'DENY');
  assert.match(res.headers()['content-security-policy'], /default-src 'none'/);
  assert.equal(await page.locator('h1').textContent(), title);
  assert.equal(await page.locator('script').count(), 0);
  await assert.doesNotReject(page.getByText('invoice inv-2026-118').waitFor());
  await assert.doesNotReject(page.getByText('Supplier: ACME <b>GmbH</b>').waitFor());
  assert.equal(await page.locator('dt:has-text("Deciding as") + dd').textContent(), 'alice');
  await page.screenshot({ path: shots + 'approval-page.png', fullPage: true });

  // A scanner fetching the link again and again changes nothing.
  for (let i = 0; i < 20; i++) await page.reload();
  assert.deepEqual((await events(run)).map((e) => e.type), ['interrupt.requested', 'approval.requested']);

  await page.getByRole('button', { name: 'Accept', exact: true }).click();
  await assert.doesNotReject(page.getByText('Your decision (accept) was recorded').waitFor());
  await page.screenshot({ path: shots + 'approval-accepted.png', fullPage: true });
  const log = await events(run);
  const voted = log.find((e) => e.type === 'interrupt.voted');
  assert.equal(voted.payload.principal, 'alice');
  assert.equal(voted.payload.resumeValue.decidedBy, 'alice');
  assert.ok(log.some((e) => e.type === 'interrupt.resolved'));

  // The link again: decided, nothing to click.
  const again = await page.goto(url);
  assert.equal(again.status(), 409);
  assert.equal(await page.getByRole('button').count(), 0);
  await page.screenshot({ path: shots + 'approval-already-decided.png', fullPage: true });
  assert.deepEqual(problems, []);
  await context.close();
});

test('each action posts what it needs, and a double click is one vote', async () => {
  const cases = [
    {
      name: 'reject', shot: 'approval-rejected.png',
      act: async (page) => {
        await page.getByLabel('Comment').first().fill('Wrong supplier <again>');
        await page.getByRole('button', { name: 'Reject' }).click();
      },
      check: (v) => { assert.equal(v.action, 'reject'); assert.equal(v.feedback, 'Wrong supplier <again>'); },
    },
    {
      name: 'refine', shot: 'approval-refine.png',
      act: async (page) => {
        await page.getByText('Ask for changes').click();
        await page.getByLabel('What should change').selectOption('items');
        await page.getByLabel(/^Items/).fill('A-1\nA-2');
        await page.getByLabel('What to change').fill('Split the delivery');
        await page.getByRole('button', { name: 'Send back for changes' }).click();
      },
      check: (v) => assert.deepEqual(v.refineFeedback, { scope: 'items', itemIds: ['A-1', 'A-2'], text: 'Split the delivery' }),
    },
    {
      name: 'edit-accept', shot: 'approval-edited.png',
      act: async (page) => {
        await page.getByText('Edit, then accept').click();
        await page.getByLabel(/^Edited data/).fill('{"amount": 12000, "currency": "EUR"}');
        await page.getByRole('button', { name: 'Accept with these edits' }).click();
      },
      check: (v) => assert.deepEqual(v.editedArtifactData, { amount: 12000, currency: 'EUR' }),
    },
    {
      name: 'ask', shot: 'approval-asked.png',
      act: async (page) => {
        await page.getByText('Ask a question').click();
        await page.getByLabel(/^Your question/).fill('Is this the May invoice?');
        await page.getByRole('button', { name: 'Ask', exact: true }).click();
      },
      check: (v) => assert.equal(v.feedback, 'Is this the May invoice?'),
      type: 'interrupt.asked',
    },
  ];
  for (const c of cases) {
    const { run, url } = await request(approval());
    const { context, page, problems } = await open(url);
    await c.act(page);
    await assert.doesNotReject(page.locator('.notice.ok').waitFor(), c.name);
    await page.screenshot({ path: shots + c.shot, fullPage: true });
    const e = (await events(run)).find((x) => x.type === (c.type ?? 'interrupt.voted'));
    assert.ok(e, `${c.name}: no ${c.type ?? 'interrupt.voted'}`);
    c.check(e.payload.resumeValue);
    assert.deepEqual(problems, [], c.name);
    await context.close();
  }

  const { run, url } = await request(approval({ requiredApprovals: 2 }));
  const { context, page } = await open(url);
  await page.getByRole('button', { name: 'Accept', exact: true }).dblclick();
  await assert.doesNotReject(page.getByText('Your vote (accept) was recorded').waitFor());
  assert.equal((await events(run)).filter((e) => e.type === 'interrupt.voted').length, 1);
  await context.close();
});

test('a mistake shows what was wrong and keeps what was typed', async () => {
  const { url } = await request(approval());
  const { context, page } = await open(url);
  await page.getByText('Edit, then accept').click();
  await page.getByLabel(/^Edited data/).fill('{"amount": 12000,');
  await page.getByRole('button', { name: 'Accept with these edits' }).click();
  await assert.doesNotReject(page.getByRole('alert').getByText('not valid JSON').waitFor());
  assert.equal(await page.getByLabel(/^Edited data/).inputValue(), '{"amount": 12000,');
  await page.screenshot({ path: shots + 'approval-mistake.png', fullPage: true });
  await context.close();
});

test('a clarification is answered field by field', async () => {
  const { run, url } = await request({
    kind: 'clarification',
    key: 'clarify-' + randomUUID(),
    data: {
      questions: [
        { id: 'address', question: 'Which address should we ship to?', schema: { type: 'string', minLength: 5 } },
        { id: 'express', question: 'Express delivery?', schema: { type: 'boolean' } },
        { id: 'boxes', question: 'How many boxes?', schema: { type: 'integer', minimum: 1 } },
      ],
    },
  });
  const { context, page, problems } = await open(url);
  await page.getByLabel('Which address should we ship to?').fill('1 Rue de Rivoli, Paris');
  await page.getByRole('group', { name: 'Express delivery?' }).getByLabel('Yes').check();
  await page.getByLabel(/^How many boxes/).fill('3');
  await page.screenshot({ path: shots + 'clarification-page.png', fullPage: true });
  await page.getByRole('button', { name: 'Send answers' }).click();
  await assert.doesNotReject(page.getByText('Your answers were recorded').waitFor());
  const resolved = (await events(run)).find((e) => e.type === 'interrupt.resolved');
  assert.deepEqual(resolved.payload.resumeValue, { answers: { address: '1 Rue de Rivoli, Paris', express: true, boxes: 3 } });
  assert.deepEqual(problems, []);
  await context.close();
});

test('an inspect link shows the approval and nothing to click', async () => {
  const { url } = await request(approval(), '', 'inspect');
  const { context, page, res } = await open(url);
  assert.equal(res.status(), 200);
  assert.equal(await page.getByRole('button').count(), 0);
  await assert.doesNotReject(page.getByText('not decide it').waitFor());
  await page.screenshot({ path: shots + 'approval-read-only.png', fullPage: true });
  await context.close();
});

test('a phone, a keyboard and axe: usable, in order, without violations', async () => {
  const { run, url } = await request(approval());
  const { context, page } = await open(url, { width: 375, height: 740 });
  assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= document.documentElement.clientWidth), 'no sideways scrolling at phone width');
  await page.screenshot({ path: shots + 'approval-phone.png', fullPage: true });
  // Tab through the page: the comment first, then Accept, which Enter presses.
  await page.keyboard.press('Tab');
  assert.equal(await page.evaluate(() => document.activeElement.id), 'feedback-quick');
  await page.keyboard.press('Tab');
  assert.equal(await page.evaluate(() => document.activeElement.textContent), 'Accept');
  await page.keyboard.press('Enter');
  await assert.doesNotReject(page.getByText('Your decision (accept) was recorded').waitFor());
  assert.ok((await events(run)).some((e) => e.type === 'interrupt.resolved'));
  await context.close();

  // axe-core runs in a context that lets a script in (the page itself admits none).
  const { url: fresh } = await request(approval());
  const audit = await browser.newContext({ bypassCSP: true });
  const p = await audit.newPage();
  await p.goto(fresh);
  await p.addScriptTag({ path: require.resolve('axe-core/axe.min.js') });
  const { violations } = await p.evaluate(() => globalThis.axe.run(document, { resultTypes: ['violations'] }));
  assert.deepEqual(violations.map((v) => `${v.id}: ${v.help} (${v.nodes.length})`), []);
  await audit.close();
});

test('a link without a credential: the approver signs in and decides as itself; an outsider signed in is refused', async () => {
  const tenant = JSON.parse(Buffer.from(jwt.split('.')[1], 'base64url').toString()).tenant;
  const { run, plain } = await request(approval({ approversList: undefined, approverGroupRefs: ['ops'] }), 'alice', 'inspect');
  const { context, page, res, problems } = await open(plain);
  assert.equal(new URL(page.url()).pathname, '/local-issuer/authorize', 'the page asks for a sign-in first');
  assert.equal(res.status(), 200);
  await page.screenshot({ path: shots + 'signin-form.png', fullPage: true });
  await signIn(page, 'alice', tenant);
  assert.equal(new URL(page.url()).pathname, new URL(plain).pathname);
  assert.equal(await page.locator('dt:has-text("Deciding as") + dd').textContent(), 'alice');
  await assert.doesNotReject(page.getByText('You are signed in as alice').waitFor());
  const cookies = await context.cookies();
  const session = cookies.find((c) => c.name === '__Host-ih-session');
  assert.ok(session && session.httpOnly && session.secure && session.sameSite === 'Lax', JSON.stringify(cookies));
  await page.screenshot({ path: shots + 'signin-approval.png', fullPage: true });
  await page.getByRole('button', { name: 'Accept', exact: true }).click();
  await assert.doesNotReject(page.getByText('Your decision (accept) was recorded').waitFor());
  const voted = (await events(run)).find((e) => e.type === 'interrupt.voted');
  assert.equal(voted.payload.principal, 'alice');
  assert.equal(voted.payload.resumeValue.decidedBy, 'alice');
  assert.deepEqual(voted.payload.eligibility, { via: 'group', ref: 'ops' });
  assert.deepEqual(problems, []);
  await context.close();

  // mallory, of the same tenant but in no group, signs in: shown, not decided, and a form
  // posted by hand with her session records nothing.
  const other = await request(approval({ approversList: undefined, approverGroupRefs: ['ops'] }), 'alice', 'inspect');
  const outsider = await open(other.plain);
  await signIn(outsider.page, 'mallory', tenant);
  assert.deepEqual(await outsider.page.getByRole('button').allTextContents(), ['Not you? Sign out']);
  await assert.doesNotReject(outsider.page.getByText('You are not one of the approvers').waitFor());
  // A read-only page says so: nothing on it is decided as her.
  assert.equal(await outsider.page.locator('dt:has-text("Opened as") + dd').textContent(), 'mallory');
  assert.ok(!(await outsider.page.content()).includes('a decision here is recorded as yours'), 'a read-only page promises no decision');
  await outsider.page.screenshot({ path: shots + 'signin-outsider.png', fullPage: true });
  const reloaded = await outsider.page.reload();
  assert.equal(reloaded.status(), 403);
  for (const form of [{ formKey: 'k1', action: 'accept' }, { formKey: 'k2', action: 'accept', csrf: 'forged' }]) {
    const posted = await outsider.context.request.post(other.plain, { form, maxRedirects: 0 });
    assert.equal(posted.status(), 403, JSON.stringify(form));
  }
  assert.deepEqual((await events(other.run)).map((e) => e.type), ['interrupt.requested', 'approval.requested']);
  // Not hers to decide: she signs out, and her session cookie is gone.
  await outsider.page.getByRole('button', { name: 'Not you? Sign out' }).click();
  await assert.doesNotReject(outsider.page.getByText('You are signed out').waitFor());
  assert.ok(!(await outsider.context.cookies()).some((c) => c.name === '__Host-ih-session'));
  await outsider.context.close();
});
