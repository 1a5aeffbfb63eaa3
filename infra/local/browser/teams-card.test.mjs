// The Teams card of a 2-of-2 approval as approvers see it, before and after they decide on it:
// the tenant's bot registered (TEAMS_OPS_JWT, a tenant of its own), alice's and bob's contacts
// naming their Entra object ids, a teams subscription to a conversation of the stack's stand-in
// for the Bot Framework (/local-botframework/), and their clicks as Teams sends them (an invoke
// with a token the stand-in signed). Teams cannot be reached from here, so each card the host
// put in the conversation is rendered with Microsoft's own Adaptive Cards renderer
// (adaptivecards on npm, pinned in package.json) in headless Chromium, and saved under
// .local/screenshots/ (README's "Decide in Teams" shows them).
//
//   TEAMS_OPS_JWT=... GATEWAY_URL=http://127.0.0.1:3000 node --test infra/local/browser/
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import { chromium } from 'playwright-core';

const gateway = process.env.GATEWAY_URL ?? 'http://127.0.0.1:3000';
const ops = process.env.TEAMS_OPS_JWT;
const shots = new URL('../../../.local/screenshots/', import.meta.url).pathname;
const chromiumPath = process.env.CHROMIUM ?? '/usr/bin/chromium';
const renderer = createRequire(import.meta.url).resolve('adaptivecards/dist/adaptivecards.min.js');
const standIn = gateway + '/local-botframework';
const serviceUrl = standIn + '/';
const entraTenant = '9a8b7c6d-1111-4222-8333-444455556666';
const users = { alice: '00000000-0000-4000-8000-0000000a11ce', bob: '00000000-0000-4000-8000-000000000b0b' };

let browser;

before(async () => {
  assert.ok(ops, 'TEAMS_OPS_JWT: a JWT with interrupts:write, runs:read, contacts:manage, subscriptions:manage and integrations:manage (make test sets it)');
  mkdirSync(shots, { recursive: true });
  browser = await chromium.launch({ executablePath: chromiumPath, args: ['--no-sandbox'] });
});

after(async () => {
  await browser?.close();
});

async function api(method, path, body) {
  const res = await fetch(gateway + path, {
    method,
    headers: { Authorization: `Bearer ${ops}`, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  assert.ok(res.status < 300, `${method} ${path}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : undefined;
}

// card polls the conversation until its one card's status line matches want (the deliverer
// follows the table's stream, which signals nothing a test can wait on), for at most 30 s.
async function card(conversation, want) {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const res = await fetch(`${standIn}/v3/conversations/${encodeURIComponent(conversation)}/activities`);
    const { activities } = await res.json();
    const cards = activities.map((a) => a.activity.attachments?.[0]?.content).filter(Boolean);
    const status = cards[0]?.body.find((b) => b.id === 'interrupt.status')?.text ?? '';
    if (cards.length === 1 && want.test(status)) return cards[0];
    assert.ok(Date.now() < deadline, `after 30 s the conversation holds ${cards.length} cards, the first saying "${status}"`);
    await new Promise((ok) => setTimeout(ok, 200));
  }
}

// click posts the invoke of person's Approve on c as Teams sends it, with a token the stand-in
// signed for the bot about the conversation's serviceUrl.
async function click(appId, person, c) {
  const approve = c.actions.find((a) => a.verb === 'interrupt.accept');
  assert.ok(approve, 'the card offers no Approve');
  const { token } = await (await fetch(standIn + '/token', { method: 'POST', body: JSON.stringify({ appId, serviceUrl }) })).json();
  const res = await fetch(gateway + '/teams/messages', {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({
      type: 'invoke', name: 'adaptiveCard/action', channelId: 'msteams', serviceUrl,
      from: { aadObjectId: users[person] }, conversation: { id: 'conv', tenantId: entraTenant }, channelData: { tenant: { id: entraTenant } },
      value: { action: { type: 'Action.Execute', verb: approve.verb, data: approve.data }, trigger: 'manual' },
    }),
  });
  const answer = await res.json();
  assert.equal(res.status, 200);
  assert.equal(answer.type, 'application/vnd.microsoft.card.adaptive', JSON.stringify(answer));
}

// shoot renders c with the Adaptive Cards renderer, as a Teams message of the bot, saves it as
// file, and answers the buttons the renderer drew.
async function shoot(c, file) {
  const context = await browser.newContext({ viewport: { width: 560, height: 200 } });
  const page = await context.newPage();
  await page.setContent(`<!doctype html><html><head><style>
    body { font-family: "Segoe UI", -apple-system, Arial, sans-serif; background: #f5f5f5; margin: 0; padding: 16px; }
    .who { color: #616161; font-size: 12px; margin: 0 0 4px 44px; } .row { display: flex; gap: 8px; }
    .avatar { width: 36px; height: 36px; border-radius: 50%; background: #5b5fc7; color: #fff; font-weight: 700; display: grid; place-items: center; flex: none; font-size: 13px; }
    #card { background: #fff; border-radius: 6px; box-shadow: 0 1px 2px rgba(0,0,0,.14); width: 460px; overflow: hidden; }
    .ac-pushButton { border: 1px solid #d1d1d1; border-radius: 4px; background: #fff; padding: 5px 12px; font-weight: 600; cursor: pointer; }
    .ac-pushButton.style-positive { background: #5b5fc7; border-color: #5b5fc7; color: #fff; }
    .ac-pushButton.style-destructive { color: #c4314b; border-color: #c4314b; }
  </style></head><body><div class="who">Interrupt host &nbsp;10:42</div><div class="row"><div class="avatar">IH</div><div id="card"></div></div></body></html>`);
  await page.addScriptTag({ path: renderer });
  const buttons = await page.evaluate((json) => {
    const ac = new AdaptiveCards.AdaptiveCard();
    ac.hostConfig = new AdaptiveCards.HostConfig({ fontFamily: 'Segoe UI, -apple-system, Arial, sans-serif' });
    ac.parse(json);
    document.getElementById('card').appendChild(ac.render());
    return [...document.querySelectorAll('#card button')].map((b) => b.textContent.trim());
  }, c);
  await page.screenshot({ path: shots + file, fullPage: true });
  await context.close();
  return buttons;
}

test('approvers decide on the Teams card: the tally after alice, the outcome after bob', async () => {
  const hex = randomUUID().replace(/-/g, '').slice(0, 12);
  const appId = `0f5b6a1e-1111-4222-8333-${hex}`;
  await api('PUT', '/integrations/teams', { appId, appPassword: 'a-client-secret-of-forty-characters-long', tenantId: entraTenant });
  await api('PUT', '/contacts/principal/alice', { teams: users.alice, name: 'Alice Martin' });
  await api('PUT', '/contacts/principal/bob', { teams: users.bob, name: 'Bob Chen' });
  const conversation = `19:approvals-${hex}@thread.tacv2`;
  const sub = await api('POST', '/subscriptions', { format: 'teams', events: ['*'], conversation: { serviceUrl, conversationId: conversation } });
  try {
    const run = 'teams-' + randomUUID().slice(0, 12);
    await api('POST', `/runs/${run}/interrupts`, {
      nodeId: 'approve',
      payload: {
        kind: 'approval', key: 'pay-4471', timeoutMs: 86_400_000,
        data: {
          artifactId: 'INV-4471', artifactType: 'invoice', title: 'Pay invoice 4471: 1,240.00 EUR to ACME GmbH',
          actions: ['accept', 'reject'], approversList: ['alice', 'bob'], requiredApprovals: 2,
        },
      },
    });
    const posted = await card(conversation, /0 of 2 approvals/);
    assert.deepEqual((await shoot(posted, 'teams-before.png')).slice(0, 3), ['Approve', 'Reject', 'Review']);

    await click(appId, 'alice', posted);
    const tally = await card(conversation, /alice accepted · 1 of 2 approvals/);
    await shoot(tally, 'teams-after-vote.png');

    await click(appId, 'bob', tally);
    const outcome = await card(conversation, /^Accepted by bob$/);
    assert.deepEqual(await shoot(outcome, 'teams-after.png'), ['Review']);
  } finally {
    await api('DELETE', `/subscriptions/${sub.id}`);
    await api('DELETE', '/integrations/teams');
  }
});
