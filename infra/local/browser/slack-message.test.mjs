// The Slack message of a 2-of-2 approval as approvers see it, before and after they decide in
// it: the tenant's Slack app registered (SLACK_OPS_JWT, a tenant of its own), alice's and bob's
// contacts naming their Slack ids, a Slack subscription to a receiver on 127.0.0.1 (Slack's
// stand-in: the incoming webhook, and each click's response_url), and their clicks signed as
// Slack signs them. Slack cannot be reached from here, so the messages the host posted are drawn
// from their Block Kit as Slack lays it out (drawn below: sections, context lines, buttons) in
// headless Chromium, and saved under .local/screenshots/ (docs/approvers.md's "Deciding in Slack" shows them).
//
//   SLACK_OPS_JWT=... GATEWAY_URL=http://127.0.0.1:3000 node --test infra/local/browser/
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { createServer } from 'node:http';
import { createHmac, randomUUID } from 'node:crypto';
import { chromium } from 'playwright-core';

const gateway = process.env.GATEWAY_URL ?? 'http://127.0.0.1:3000';
const ops = process.env.SLACK_OPS_JWT;
const shots = new URL('../../../.local/screenshots/', import.meta.url).pathname;
const chromiumPath = process.env.CHROMIUM ?? '/usr/bin/chromium';
const secret = '8f742231b10e8888abcd99e5a6b7c885';

let browser;
let receiver;
const posted = []; // every body posted to the receiver, in order
const waiters = [];

before(async () => {
  assert.ok(ops, 'SLACK_OPS_JWT: a JWT with interrupts:write, runs:read, contacts:manage, subscriptions:manage and integrations:manage (make test sets it)');
  mkdirSync(shots, { recursive: true });
  browser = await chromium.launch({ executablePath: chromiumPath, args: ['--no-sandbox'] });
  receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => { body += c; });
    req.on('end', () => {
      posted.push({ path: req.url, body: JSON.parse(body) });
      res.end('ok');
      for (const w of waiters.splice(0)) w();
    });
  });
  await new Promise((ok) => receiver.listen(0, '127.0.0.1', ok));
});

after(async () => {
  await browser?.close();
  receiver?.close();
});

const hooks = () => `http://127.0.0.1:${receiver.address().port}`;

// arrived waits until n bodies were posted to path since the first from bodies (of any path),
// for at most 30 s, and returns the nth. Each path is counted on its own: the subscription's
// message (/incoming) is delivered at least once, so a copy of it may come at any time, while a
// click's response_url (/respond) gets one message per click, posted before the click is
// answered, which is what the nth counts.
async function arrived(path, n, from = 0) {
  const deadline = Date.now() + 30_000;
  const to = () => posted.slice(from).filter((p) => p.path === path);
  while (to().length < n) {
    assert.ok(Date.now() < deadline, `${to().length} messages to ${path} after 30 s, want ${n}`);
    await new Promise((ok) => { waiters.push(ok); setTimeout(ok, 500); });
  }
  return to()[n - 1];
}

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

// click posts a click of the button actionId of message to the app's interactivity URL, by
// member user, signed with the app's secret as Slack signs one: v0=HMAC-SHA256(secret,
// "v0:<timestamp>:<body>").
async function click(app, user, message, actionId) {
  const button = message.blocks.flatMap((b) => b.elements ?? []).find((e) => e.action_id === actionId);
  assert.ok(button, `the message has no ${actionId}`);
  const ts = String(Math.floor(Date.now() / 1000));
  const payload = {
    type: 'block_actions', api_app_id: app.appId, team: { id: app.teamId }, user: { id: user },
    response_url: hooks() + '/respond', trigger_id: 'trigger', message: { text: message.text, blocks: message.blocks },
    actions: [{ type: 'button', block_id: 'actions', action_id: actionId, value: button.value, action_ts: ts }],
  };
  const body = new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
  const sig = 'v0=' + createHmac('sha256', secret).update(`v0:${ts}:${body}`).digest('hex');
  const res = await fetch(gateway + '/slack/interactions', {
    method: 'POST', body,
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'X-Slack-Request-Timestamp': ts, 'X-Slack-Signature': sig },
  });
  assert.equal(res.status, 200, await res.text());
}

const esc = (s) => String(s).replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]);

// text draws a text object: plain_text as it is; mrkdwn's mentions by the names the contacts
// give, a date by its fallback text, as Slack shows them.
function text(t, names) {
  if (!t) return '';
  if (t.type === 'plain_text') return esc(t.text).replace(/\n/g, '<br>');
  return esc(t.text)
    .replace(/&lt;@(\w+)&gt;/g, (_, id) => `<span class="mention">@${esc(names[id] ?? id)}</span>`)
    .replace(/&lt;!date\^\d+\^[^|]*\|([^&]*)&gt;/g, '$1');
}

// draw lays a message out as Slack does: the app's name and the time, then each block.
function draw(msg, names) {
  const blocks = msg.blocks.map((b, i) => {
    switch (b.type) {
      case 'section': return `<div class="section${i === 0 ? ' headline' : ''}">${text(b.text, names)}</div>`;
      case 'context': return `<div class="context">${b.elements.map((e) => `<span>${text(e, names)}</span>`).join('')}</div>`;
      case 'actions': return `<div class="actions">${b.elements.map((e) => `<span class="button ${e.style ?? ''}">${esc(e.text.text)}</span>`).join('')}</div>`;
      default: return '';
    }
  }).join('');
  return `<!doctype html><html><head><style>
    body { font: 15px/1.46668 -apple-system, "Segoe UI", Lato, Arial, sans-serif; color: #1d1c1d; margin: 0; background: #fff; }
    .message { display: flex; gap: 8px; padding: 12px 20px; max-width: 680px; }
    .avatar { width: 36px; height: 36px; border-radius: 6px; background: #4a154b; color: #fff; font-weight: 700; display: grid; place-items: center; flex: none; }
    .name { font-weight: 900; } .app { background: #e8e8e8; color: #616061; font-size: 10px; padding: 1px 3px; border-radius: 2px; margin: 0 4px; }
    .time { color: #616061; font-size: 12px; }
    .section { margin: 4px 0; } .headline { font-weight: 700; }
    .context { color: #616061; font-size: 12px; margin: 4px 0; } .context span + span { margin-left: 8px; }
    .mention { background: #e8f5fa; color: #1264a3; border-radius: 3px; padding: 0 2px; }
    .actions { margin: 8px 0; display: flex; gap: 8px; flex-wrap: wrap; }
    .button { border: 1px solid #bbb; border-radius: 4px; padding: 3px 12px; font-weight: 700; font-size: 13px; }
    .primary { background: #007a5a; border-color: #007a5a; color: #fff; } .danger { background: #e01e5a; border-color: #e01e5a; color: #fff; }
  </style></head><body><div class="message"><div class="avatar">IH</div><div>
    <div><span class="name">Interrupt host</span><span class="app">APP</span><span class="time">10:42</span></div>
    ${blocks}</div></div></body></html>`;
}

async function shoot(msg, names, file) {
  const context = await browser.newContext({ viewport: { width: 720, height: 200 } });
  const page = await context.newPage();
  await page.setContent(draw(msg, names));
  await page.screenshot({ path: shots + file, fullPage: true });
  await context.close();
}

test('approvers decide in the Slack message: the tally after alice, the outcome after bob', async () => {
  const suffix = randomUUID().replace(/-/g, '').slice(0, 10).toUpperCase();
  const app = await api('PUT', '/integrations/slack', { appId: 'A' + suffix, teamId: 'T' + suffix, signingSecret: secret });
  const names = { U0ALICE: 'Alice Martin', U0BOB: 'Bob Chen' };
  await api('PUT', '/contacts/principal/alice', { slack: 'U0ALICE', name: names.U0ALICE });
  await api('PUT', '/contacts/principal/bob', { slack: 'U0BOB', name: names.U0BOB });
  const sub = await api('POST', '/subscriptions', { url: hooks() + '/incoming', events: ['interrupt.requested'], format: 'slack' });
  try {
    const start = posted.length;
    const run = 'slack-' + randomUUID().slice(0, 12);
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
    const request = (await arrived('/incoming', 1, start)).body;
    const ids = request.blocks.flatMap((b) => b.elements ?? []).map((e) => e.action_id).filter(Boolean);
    assert.deepEqual(ids.slice(0, 2), ['interrupt.accept', 'interrupt.reject']);
    await shoot(request, names, 'slack-before.png');

    await click(app, 'U0ALICE', request, 'interrupt.accept');
    const tally = (await arrived('/respond', 1, start)).body;
    assert.equal(tally.replace_original, true);
    assert.match(tally.text, /alice accepted · 1 of 2 approvals/);
    await shoot(tally, names, 'slack-after-vote.png');

    await click(app, 'U0BOB', tally, 'interrupt.accept');
    const outcome = (await arrived('/respond', 2, start)).body;
    assert.equal(outcome.text, 'Accepted by bob');
    assert.ok(!outcome.blocks.flatMap((b) => b.elements ?? []).some((e) => String(e.action_id).startsWith('interrupt.')));
    await shoot(outcome, names, 'slack-after.png');
  } finally {
    await api('DELETE', `/subscriptions/${sub.id}`);
    await api('DELETE', '/integrations/slack');
  }
});
