// The URL-mode hand-off (issue 15) as the official MCP TypeScript SDK
// client (1.32, pinned in package.json and package-lock.json beside this
// file) meets it. scripts/dev's TestHandOffWithTheTypeScriptSDKAndChromium
// installs the tree into .tools/interop-ts and runs this file with node
// against the dev server:
//
//   CUSTODY_MCP_URL   the /mcp endpoint
//   CUSTODY_KEY       a key of the demo firm's attorney
//   CUSTODY_CASE_ID   the matter to propose on
//
// A 2025-11-25 session declaring {"elicitation":{"url":{}}} calls
// propose_action. The SDK's request handler receives elicitation/create
// (mode url) on the call's stream and accepts; this prints
// "HANDOFF_URL <url>" for the test, which opens it in Chromium and
// approves the proposal. The client then waits for
// notifications/elicitation/complete on its GET stream, prints
// "HANDOFF_COMPLETE <elicitationId>" and exits 0.
import assert from 'node:assert/strict';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CallToolResultSchema,
  ElicitationCompleteNotificationSchema,
  ElicitRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';

function required(name) {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set`);
  return v;
}

const url = new URL(required('CUSTODY_MCP_URL'));
const key = required('CUSTODY_KEY');
const caseID = required('CUSTODY_CASE_ID');

const client = new Client({ name: 'custody-handoff', version: '1.0.0' }, { capabilities: { elicitation: { url: {} } } });
let asked;
client.setRequestHandler(ElicitRequestSchema, async (req) => {
  asked = req.params;
  console.log(`HANDOFF_URL ${req.params.url}`);
  return { action: 'accept' };
});
const completed = new Promise((resolve) => {
  client.setNotificationHandler(ElicitationCompleteNotificationSchema, (n) => resolve(n.params.elicitationId));
});
const transport = new StreamableHTTPClientTransport(url, { requestInit: { headers: { Authorization: `Bearer ${key}` } } });
await client.connect(transport);

const res = await client.request({
  method: 'tools/call',
  params: {
    name: 'propose_action',
    arguments: {
      case_id: caseID, action: 'create_deadline', reason: 'The scheduling order sets it.', idempotency_key: 'sdk-handoff',
      args: { title: 'Handed off by the SDK', due_date: '2027-02-01', kind: 'filing' },
    },
  },
}, CallToolResultSchema);
assert.equal(res.structuredContent?.status, 'pending_approval', JSON.stringify(res));
assert.ok(asked, 'no elicitation/create came before the receipt');
assert.equal(asked.mode, 'url');
assert.match(asked.elicitationId, /^eli_[0-9a-f]{32}$/);
console.log(`HANDOFF_RECEIPT ${res.structuredContent.approval_id}`);

const id = await Promise.race([completed, new Promise((_, reject) => setTimeout(() => reject(new Error('no notifications/elicitation/complete within 90 s')), 90_000))]);
assert.equal(id, asked.elicitationId);
console.log(`HANDOFF_COMPLETE ${id}`);
await client.close();
