// The approval page in a real browser: Debian's headless Chromium driven by playwright-core,
// against the stack `make test` runs (GATEWAY_URL), as an approver who opens a link would use
// it: a link holding a token (minted by the team's mailer, DELEGATE_JWT), and a link holding
// none, where the approver signs in with the local identity provider; and a link read from the
// mail the host sent through moto's SES (a tenant of its own: its engine MAIL_ENGINE_JWT, and
// MAIL_OPS_JWT, who sets its contacts and an email subscription of signed links). A screenshot of each state is saved under .local/screenshots/ for review.
//
//   ENGINE_JWT=... DELEGATE_JWT=... MAIL_ENGINE_JWT=... MAIL_OPS_JWT=... GATEWAY_URL=http://127.0.0.1:3000 node --test infra/local/browser/
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { randomUUID } from 'node:crypto';
import { chromium } from 'playwright-core';
import { simpleParser } from 'mailparser';

const require = createRequire(import.meta.url);
const gateway = process.env.GATEWAY_URL ?? 'http://127.0.0.1:3000';
const jwt = process.env.ENGINE_JWT;
const delegateJwt = process.env.DELEGATE_JWT;
const mailEngineJwt = process.env.MAIL_ENGINE_JWT;
const mailOpsJwt = process.env.MAIL_OPS_JWT;
const ses = process.env.AWS_ENDPOINT_URL_SESV2 ?? 'http://127.0.0.1:5001';
const shots = new URL('../../../.local/screenshots/', import.meta.url).pathname;
const chromiumPath = process.env.CHROMIUM ?? '/usr/bin/chromium';

let browser;

before(async () => {
  assert.ok(jwt, 'ENGINE_JWT: a JWT with interrupts:write and runs:read (make test sets it)');
  assert.ok(delegateJwt, 'DELEGATE_JWT: a JWT with tokens:delegate, of the same tenant (make test sets it)');
  assert.ok(mailEngineJwt && mailOpsJwt, 'MAIL_ENGINE_JWT (interrupts:write, runs:read) and MAIL_OPS_JWT (contacts:manage, subscriptions:manage, tokens:delegate): JWTs of another tenant (make test sets them)');
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
  await page.waitForURL((u) => u.pathname.startsWith('/approve'));
}

async function events(run, bearer = jwt) {
  return (await api('GET', `/runs/${run}/events`, undefined, bearer)).events;
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
  // Post/Redirect/Get: the browser is back on the link, and a refresh records nothing more.
  assert.equal(page.url(), url);
  const recorded = (await events(run)).length;
  await page.reload();
  assert.equal((await events(run)).length, recorded, 'a refresh after the decision recorded something');
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
        await page.getByLabel('What should change').fill('Split the delivery');
        await page.getByLabel('Lines: A-1').check();
        await page.getByRole('button', { name: 'Send back for changes' }).click();
      },
      check: (v) => assert.deepEqual(v.refineFeedback, { scope: 'items', itemIds: ['A-1'], text: 'Split the delivery' }),
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
  const { decidedAt, ...answered } = resolved.payload.resumeValue;
  assert.deepEqual(answered, { answers: { address: '1 Rue de Rivoli, Paris', express: true, boxes: 3 }, decidedBy: 'alice' });
  assert.ok(!Number.isNaN(Date.parse(decidedAt)), 'the answers record when they were given');
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
  // Tab through the page: the data's JSON disclosure, the comment, then Accept, which Enter
  // presses.
  await page.keyboard.press('Tab');
  assert.equal(await page.evaluate(() => document.activeElement.textContent), 'The data as JSON');
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

// mailTo is every distinct message moto's SES accepted for address, parsed as a mail client
// parses it (moto keeps what it was sent at moto-api/data.json: docs/approvers.md, "Mail"). Mail goes out at
// least once: a send whose mark was lost is sent again, the same message but for its Date and
// Message-ID (a signed link is the same on every attempt). SES's copy names no event, so a
// message is known by its subject and text, and a copy of one already kept is left out; two
// messages that differ in anything they say are both kept.
async function mailTo(address) {
  const data = await (await fetch(ses + '/moto-api/data.json')).json();
  const out = [];
  for (const m of data.ses?.RawMessage ?? []) {
    const parsed = await simpleParser(m.raw_data);
    if (!parsed.to?.value.some((a) => a.address === address)) continue;
    if (!out.some((o) => o.subject === parsed.subject && o.text === parsed.text)) out.push(parsed);
  }
  return out;
}

// axe audits what page shows, in a context of the same size that lets axe's script in (the page
// itself admits none).
async function audit(url, viewport) {
  const context = await browser.newContext({ bypassCSP: true, viewport });
  const p = await context.newPage();
  await p.goto(url);
  await p.addScriptTag({ path: require.resolve('axe-core/axe.min.js') });
  const { violations } = await p.evaluate(() => globalThis.axe.run(document, { resultTypes: ['violations'] }));
  await context.close();
  return violations.map((v) => `${v.id}: ${v.help} (${v.nodes.length})`);
}

test('from the mail: each approver gets one message, decides from its link, and sees what the other did', async () => {
  const tag = randomUUID().slice(0, 8);
  const address = (who) => `${who}.${tag}@browser-mail.example.com`;
  // The tenant's own state: one email subscription, contacts for alice and bob.
  for (const s of (await api('GET', '/subscriptions', undefined, mailOpsJwt)).subscriptions ?? []) {
    await fetch(`${gateway}/subscriptions/${s.id}`, { method: 'DELETE', headers: { Authorization: `Bearer ${mailOpsJwt}` } });
  }
  await api('POST', '/subscriptions', { format: 'email', events: ['interrupt.requested'], approvalLinks: 'signed' }, mailOpsJwt);
  for (const who of ['alice', 'bob']) {
    await api('PUT', `/contacts/principal/${who}`, { email: address(who), name: who[0].toUpperCase() + who.slice(1) }, mailOpsJwt);
  }
  const run = 'mail-' + randomUUID().slice(0, 12);
  await api('POST', `/runs/${run}/interrupts`, {
    nodeId: 'approve',
    payload: approval({
      title: 'Pay ACME GmbH invoice INV-2026-118',
      description: 'Packaging for the June production run. Due within 14 days of delivery.',
      artifactData: {
        amount: 12400, currency: 'EUR', dueDate: '2026-12-16',
        supplier: { name: 'ACME GmbH', vatNumber: 'DE123456789', city: 'Köln' },
        lines: [
          { sku: 'BOX-40', description: 'Shipping box, 40 cm', qty: 2000, unitPrice: 4.2 },
          { sku: 'TAPE-50', description: 'Packing tape, 50 m', qty: 800, unitPrice: 5 },
        ],
      },
      requiredApprovals: 2, approversList: ['alice', 'bob'],
    }),
  }, mailEngineJwt);

  // moto signals nothing: poll what it accepted, for up to 30 s.
  let mail = {};
  for (let i = 0; i < 300 && !(mail.alice?.length && mail.bob?.length); i++) {
    await new Promise((r) => setTimeout(r, 100));
    mail = { alice: await mailTo(address('alice')), bob: await mailTo(address('bob')) };
  }
  assert.equal(mail.alice?.length, 1, 'one message to alice');
  assert.equal(mail.bob?.length, 1, 'one message to bob');
  const link = (m, label = 'Open it') => m.text.match(new RegExp(`^${label}: (https?://\\S+/approve/ow2\\.\\S+)`, 'm'))?.[1];
  const [aliceLink, bobLink] = [link(mail.alice[0]), link(mail.bob[0])];
  assert.ok(aliceLink && bobLink && aliceLink !== bobLink, `each message holds its own link:\n${mail.alice[0].text}\n${mail.bob[0].text}`);
  // The mail's Reject opens bob's own link with the choice made, to confirm on the page.
  const bobReject = link(mail.bob[0], 'Reject');
  assert.equal(bobReject, bobLink + '?choice=reject');
  assert.match(mail.alice[0].html, /Pay ACME GmbH invoice INV-2026-118/);

  // alice, on her phone: the page is usable at 390 px and axe finds nothing; she asks a question.
  assert.deepEqual(await audit(aliceLink, { width: 390, height: 844 }), []);
  const alice = await open(aliceLink, { width: 390, height: 844 });
  assert.ok(await alice.page.evaluate(() => document.documentElement.scrollWidth <= document.documentElement.clientWidth), 'no sideways scrolling at 390 px');
  assert.equal(await alice.page.locator('dt:has-text("Deciding as") + dd').textContent(), 'alice');
  await alice.page.screenshot({ path: shots + 'mail-alice-phone.png', fullPage: true });
  await alice.page.getByText('Ask a question').click();
  await alice.page.getByLabel(/^Your question/).fill('Is this the May delivery or the June one?');
  await alice.page.getByRole('button', { name: 'Ask', exact: true }).click();
  await assert.doesNotReject(alice.page.getByText('Your question was recorded').waitFor());
  const recorded = (await events(run, mailEngineJwt)).length;
  await alice.page.reload();
  assert.equal((await events(run, mailEngineJwt)).length, recorded, 'a refresh after the question recorded something');

  // bob, at his desk: he clicks Reject in his mail, reads alice's question, and confirms, with
  // a comment; opening the link recorded nothing.
  assert.deepEqual(await audit(bobReject, { width: 1000, height: 900 }), []);
  const before = (await events(run, mailEngineJwt)).length;
  const bob = await open(bobReject, { width: 1000, height: 900 });
  assert.equal((await events(run, mailEngineJwt)).length, before, 'opening the mail\'s Reject recorded something');
  assert.equal(await bob.page.getByRole('button', { name: 'Confirm: accept' }).count(), 0);
  await assert.doesNotReject(bob.page.getByText('Is this the May delivery or the June one?').waitFor());
  await bob.page.screenshot({ path: shots + 'mail-bob-desktop.png', fullPage: true });
  await bob.page.getByLabel('Comment').first().fill('The June delivery was already paid.');
  await bob.page.getByRole('button', { name: 'Confirm: reject' }).click();
  await assert.doesNotReject(bob.page.getByText('Your decision (reject) was recorded').waitFor());
  await bob.page.reload();
  assert.equal((await events(run, mailEngineJwt)).filter((e) => e.type === 'interrupt.voted').length, 1, 'one vote, whatever the refreshes');

  // alice's page now says what happened, by whom, and why.
  await alice.page.reload();
  for (const text of ['Rejected by bob', 'The June delivery was already paid.']) {
    await assert.doesNotReject(alice.page.getByText(text).first().waitFor(), text);
  }
  assert.equal(await alice.page.getByRole('button', { name: 'Accept', exact: true }).count(), 0);
  await alice.page.screenshot({ path: shots + 'mail-alice-outcome-phone.png', fullPage: true });
  assert.deepEqual([...alice.problems, ...bob.problems], []);
  await alice.context.close();
  await bob.context.close();
});

test('the inbox: a signed-in approver sees what waits for them, usable on a phone, and opens it', async () => {
  const tenant = JSON.parse(Buffer.from(jwt.split('.')[1], 'base64url').toString()).tenant;
  const title = 'Inbox: pay ACME GmbH ' + randomUUID().slice(0, 6);
  const { run } = await request(approval({ approversList: undefined, approverGroupRefs: ['finance'], title }), 'alice', 'inspect');
  // axe needs its script in: a context that bypasses the page's CSP, signed in as alice.
  const context = await browser.newContext({ bypassCSP: true, viewport: { width: 390, height: 844 } });
  const page = await context.newPage();
  await page.goto(`${gateway}/approve`);
  await signIn(page, 'alice', tenant);
  assert.equal(new URL(page.url()).pathname, '/approve');
  // The inbox follows the table's stream: reload until read-models took the request.
  for (let i = 0; i < 100 && (await page.getByRole('link', { name: title }).count()) === 0; i++) {
    await new Promise((r) => setTimeout(r, 200));
    await page.reload();
  }
  await assert.doesNotReject(page.getByRole('link', { name: title }).waitFor());
  await assert.doesNotReject(page.getByText('You are signed in as alice').waitFor());
  assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= document.documentElement.clientWidth), 'no sideways scrolling at 390 px');
  await page.screenshot({ path: shots + 'inbox-phone.png', fullPage: true });
  await page.addScriptTag({ path: require.resolve('axe-core/axe.min.js') });
  const { violations } = await page.evaluate(() => globalThis.axe.run(document, { resultTypes: ['violations'] }));
  assert.deepEqual(violations.map((v) => `${v.id}: ${v.help} (${v.nodes.length})`), []);
  await page.getByRole('link', { name: title }).click();
  await page.waitForURL((u) => u.pathname.startsWith(`/approve/${run}/`));
  assert.equal(await page.locator('dt:has-text("Deciding as") + dd').textContent(), 'alice');
  await context.close();
});
